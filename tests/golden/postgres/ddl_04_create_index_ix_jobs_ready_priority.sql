CREATE INDEX IF NOT EXISTS "ix_jobs_ready" ON "jobs" ("priority" DESC, "id" ASC) INCLUDE ("due_at", "stage_tag") WHERE "state" = 'ready'
