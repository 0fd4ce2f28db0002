CREATE UNLOGGED TABLE IF NOT EXISTS "jobs_sqlqueue_staging" (
  "stage_tag" varchar(400) NOT NULL,
  "Payload" nvarchar(max) NULL,
  "ProcessingStartedAt" datetime2(7) NULL
)
