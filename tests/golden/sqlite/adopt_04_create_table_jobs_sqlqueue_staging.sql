CREATE TABLE IF NOT EXISTS "jobs_sqlqueue_staging" (
  "stage_tag" VARCHAR(200) NOT NULL,
  "Payload" nvarchar(max) NULL,
  "ProcessingStartedAt" datetime2(7) NULL
)
