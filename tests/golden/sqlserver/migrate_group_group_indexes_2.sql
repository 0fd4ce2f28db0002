IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_group_busy' AND object_id = OBJECT_ID(N'dbo.jobs'))
CREATE INDEX [ix_jobs_group_busy] ON [dbo].[jobs] ([customer_id]) INCLUDE ([state], [due_at]) WHERE [attempts] > 0 AND [state] IN ('ready', 'claimed')
