SELECT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('"ix_jobs_staged"'))
