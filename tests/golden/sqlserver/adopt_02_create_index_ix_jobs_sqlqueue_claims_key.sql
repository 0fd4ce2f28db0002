IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_sqlqueue_claims_key' AND object_id = OBJECT_ID(N'dbo.jobs_sqlqueue_claims'))
CREATE INDEX [ix_jobs_sqlqueue_claims_key] ON [dbo].[jobs_sqlqueue_claims] ([Id])
