CREATE INDEX IF NOT EXISTS "ix_jobs_staged" ON "jobs" ("stage_tag") WHERE "state" = 'staged'
