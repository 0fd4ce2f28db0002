CREATE INDEX IF NOT EXISTS "ix_jobs_staging_tag" ON "jobs_staging" ("stage_tag")
