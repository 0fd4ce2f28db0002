CREATE INDEX IF NOT EXISTS "ix_jobs_group_busy" ON "jobs" ("customer_id", "state", "due_at") WHERE "attempts" > 0 AND "state" IN ('ready', 'claimed')
