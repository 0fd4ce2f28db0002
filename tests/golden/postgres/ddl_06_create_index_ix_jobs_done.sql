CREATE INDEX IF NOT EXISTS "ix_jobs_done" ON "jobs" ("completed_at") WHERE "state" = 'done'
