CREATE UNIQUE INDEX IF NOT EXISTS "ux_jobs_dedup" ON "jobs" ("dedup_key") WHERE "dedup_key" IS NOT NULL
