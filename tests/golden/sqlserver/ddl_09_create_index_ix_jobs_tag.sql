IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_tag' AND object_id = OBJECT_ID(N'dbo.jobs'))
CREATE INDEX [ix_jobs_tag] ON [dbo].[jobs] ([stage_tag]) WHERE [stage_tag] IS NOT NULL
