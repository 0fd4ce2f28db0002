CREATE TABLE IF NOT EXISTS "jobs_sqlqueue_staging" (
  "stage_tag" VARCHAR(200) NOT NULL,
  "Payload" nvarchar(max),
  "ProcessingStartedAt" datetime2(7)
)
