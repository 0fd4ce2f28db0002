CREATE TABLE IF NOT EXISTS "jobs_sqlqueue_claims" (
  "sqlqueue_row" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
  "sqlqueue_consumer" VARCHAR(200) NOT NULL,
  "sqlqueue_claim_seq" BIGINT NOT NULL,
  "Id" bigint,
  "Payload" nvarchar(max),
  "ProcessingStartedAt" datetime2(7)
)
