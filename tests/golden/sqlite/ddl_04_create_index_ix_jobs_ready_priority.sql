CREATE INDEX IF NOT EXISTS "ix_jobs_ready" ON "jobs" ("priority" DESC, "id" ASC, "due_at", "stage_tag") WHERE "state" = 'ready'
