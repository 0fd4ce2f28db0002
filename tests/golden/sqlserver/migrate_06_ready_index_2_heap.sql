IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_ready' AND object_id = OBJECT_ID(N'dbo.jobs'))
CREATE INDEX [ix_jobs_ready] ON [dbo].[jobs] ([id] ASC) INCLUDE ([due_at], [priority], [stage_tag]) WHERE [state] = 'ready'
