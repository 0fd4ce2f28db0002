CREATE INDEX IF NOT EXISTS "ix_jobs_sqlqueue_staging_tag" ON "jobs_sqlqueue_staging" ("stage_tag")
