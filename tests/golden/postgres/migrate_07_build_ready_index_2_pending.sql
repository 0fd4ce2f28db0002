CREATE INDEX CONCURRENTLY IF NOT EXISTS "ix_jobs_ready_next" ON "jobs" ("due_at" ASC, "id" ASC) INCLUDE ("priority") WHERE "state" = 'ready'
