CREATE TABLE IF NOT EXISTS "jobs_sqlqueue_claims" (
  "sqlqueue_row" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
  "sqlqueue_consumer" VARCHAR(200) NOT NULL,
  "sqlqueue_claim_seq" BIGINT NOT NULL,
  "Id" bigint NULL,
  "Payload" nvarchar(max) NULL,
  "ProcessingStartedAt" datetime2(7) NULL
)
