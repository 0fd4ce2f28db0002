CREATE INDEX IF NOT EXISTS "ix_jobs_ready" ON "jobs" ("id" ASC, "due_at", "priority", "stage_tag") WHERE "state" = 'ready'
