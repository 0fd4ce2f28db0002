CREATE INDEX CONCURRENTLY IF NOT EXISTS "ix_jobs_ready_next" ON "jobs" ("priority" DESC, "id" ASC) INCLUDE ("due_at") WHERE "state" = 'ready'
