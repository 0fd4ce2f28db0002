CREATE INDEX CONCURRENTLY IF NOT EXISTS "ix_jobs_ready_next" ON "jobs" ("id" ASC) INCLUDE ("due_at", "priority") WHERE "state" = 'ready'
