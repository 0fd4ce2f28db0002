CREATE TABLE IF NOT EXISTS "jobs_claims" (
  "sqlqueue_consumer" varchar(400) NOT NULL,
  "sqlqueue_claim_seq" bigint NOT NULL,
  "sqlqueue_first_id" bigint NOT NULL,
  "sqlqueue_last_id" bigint NOT NULL,
  "sqlqueue_claimed_at" timestamptz DEFAULT now() NOT NULL,
  "sqlqueue_lease_until" timestamptz NOT NULL,
  CONSTRAINT "pk_jobs_claims" PRIMARY KEY ("sqlqueue_consumer", "sqlqueue_claim_seq", "sqlqueue_first_id")
)
