IF EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_staged' AND object_id = OBJECT_ID(N'dbo.jobs'))
IF NOT EXISTS (SELECT 1 FROM [dbo].[jobs] WITH (READCOMMITTEDLOCK) WHERE [state] = 'staged')
DROP INDEX [ix_jobs_staged] ON [dbo].[jobs]
