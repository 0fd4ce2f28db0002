IF OBJECT_ID(N'dbo.jobs_layout', N'U') IS NULL
CREATE TABLE [dbo].[jobs_layout] (
  [layout] INT NOT NULL,
  [recorded_at] DATETIME2(6) NOT NULL DEFAULT SYSUTCDATETIME(),
  CONSTRAINT [pk_jobs_layout] PRIMARY KEY ([layout])
)
