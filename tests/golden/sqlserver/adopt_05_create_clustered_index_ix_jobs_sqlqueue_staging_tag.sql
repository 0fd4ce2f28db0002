IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_sqlqueue_staging_tag' AND object_id = OBJECT_ID(N'dbo.jobs_sqlqueue_staging'))
CREATE CLUSTERED INDEX [ix_jobs_sqlqueue_staging_tag] ON [dbo].[jobs_sqlqueue_staging] ([stage_tag])
