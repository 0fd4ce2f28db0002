CREATE INDEX IF NOT EXISTS "ix_jobs_group" ON "jobs" ("customer_id", "id", "due_at", "stage_tag") WHERE "state" = 'ready'
