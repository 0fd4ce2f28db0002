DROP INDEX IF EXISTS "ix_jobs_staged"
