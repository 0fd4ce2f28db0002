IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ux_jobs_dedup' AND object_id = OBJECT_ID(N'dbo.jobs'))
CREATE UNIQUE INDEX [ux_jobs_dedup] ON [dbo].[jobs] ([dedup_key]) WHERE [dedup_key] IS NOT NULL
