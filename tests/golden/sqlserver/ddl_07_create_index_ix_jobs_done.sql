IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_done' AND object_id = OBJECT_ID(N'dbo.jobs'))
CREATE INDEX [ix_jobs_done] ON [dbo].[jobs] ([completed_at]) WHERE [state] = 'done'
