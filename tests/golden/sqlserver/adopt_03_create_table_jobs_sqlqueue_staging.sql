IF OBJECT_ID(N'dbo.jobs_sqlqueue_staging', N'U') IS NULL
CREATE TABLE [dbo].[jobs_sqlqueue_staging] (
  [stage_tag] NVARCHAR(400) NOT NULL,
  [Payload] nvarchar(max) NULL,
  [ProcessingStartedAt] datetime2(7) NULL
)
