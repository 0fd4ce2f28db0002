CREATE INDEX IF NOT EXISTS "ix_jobs_ready" ON "jobs" ("due_at" ASC, "id" ASC) INCLUDE ("priority") WHERE "state" = 'ready'
