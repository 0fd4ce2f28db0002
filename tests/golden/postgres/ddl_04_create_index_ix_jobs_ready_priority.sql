CREATE INDEX IF NOT EXISTS "ix_jobs_ready" ON "jobs" ("priority" DESC, "id" ASC) INCLUDE ("due_at") WHERE "state" = 'ready'
