IF OBJECT_ID(N'dbo.jobs_staging', N'U') IS NULL
CREATE TABLE [dbo].[jobs_staging] (
  [stage_tag] NVARCHAR(400) NOT NULL,
  [priority] INT,
  [due_at] DATETIME2(6),
  [dedup_key] NVARCHAR(400),
  [max_attempts] INT,
  [payload] NVARCHAR(MAX)
)
