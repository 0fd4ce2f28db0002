IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_group' AND object_id = OBJECT_ID(N'dbo.jobs'))
CREATE INDEX [ix_jobs_group] ON [dbo].[jobs] ([customer_id], [id]) INCLUDE ([due_at], [stage_tag]) WHERE [state] = 'ready'
