CREATE INDEX IF NOT EXISTS "ix_jobs_sqlqueue_claims_held" ON "jobs_sqlqueue_claims" ("sqlqueue_consumer", "sqlqueue_claim_seq", "sqlqueue_row")
