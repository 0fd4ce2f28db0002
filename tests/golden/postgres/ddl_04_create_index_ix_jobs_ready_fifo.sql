CREATE INDEX IF NOT EXISTS "ix_jobs_ready" ON "jobs" ("id" ASC) INCLUDE ("due_at", "priority") WHERE "state" = 'ready'
