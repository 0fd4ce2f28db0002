CREATE TABLE IF NOT EXISTS "jobs_claims" (
  "sqlqueue_consumer" VARCHAR(200) NOT NULL,
  "sqlqueue_claim_seq" BIGINT NOT NULL,
  "sqlqueue_first_id" BIGINT NOT NULL,
  "sqlqueue_last_id" BIGINT NOT NULL,
  "sqlqueue_claimed_at" TIMESTAMP DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')) NOT NULL,
  "sqlqueue_lease_until" TIMESTAMP NOT NULL,
  CONSTRAINT "pk_jobs_claims" PRIMARY KEY ("sqlqueue_consumer", "sqlqueue_claim_seq", "sqlqueue_first_id")
)
