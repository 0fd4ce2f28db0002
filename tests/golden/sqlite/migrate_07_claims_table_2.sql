CREATE UNIQUE INDEX IF NOT EXISTS "ux_jobs_claims_first" ON "jobs_claims" ("sqlqueue_first_id", "sqlqueue_last_id")
