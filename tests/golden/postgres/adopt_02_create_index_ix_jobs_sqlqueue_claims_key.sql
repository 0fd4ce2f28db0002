CREATE INDEX IF NOT EXISTS "ix_jobs_sqlqueue_claims_key" ON "jobs_sqlqueue_claims" ("Id")
