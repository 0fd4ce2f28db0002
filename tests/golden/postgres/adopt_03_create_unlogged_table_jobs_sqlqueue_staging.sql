CREATE UNLOGGED TABLE IF NOT EXISTS "jobs_sqlqueue_staging" (
  "stage_tag" varchar(400) NOT NULL,
  "Payload" nvarchar(max),
  "ProcessingStartedAt" datetime2(7)
)
