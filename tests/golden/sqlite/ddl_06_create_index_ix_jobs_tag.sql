CREATE INDEX IF NOT EXISTS "ix_jobs_tag" ON "jobs" ("stage_tag") WHERE "stage_tag" IS NOT NULL
