DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('"ix_jobs_staged"')) THEN
    IF NOT EXISTS (SELECT 1 FROM "jobs" WHERE "state" = 'staged') THEN
      DROP INDEX "ix_jobs_staged";
    END IF;
  END IF;
END $$
