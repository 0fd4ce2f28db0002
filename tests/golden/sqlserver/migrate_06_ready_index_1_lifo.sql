IF EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_ready' AND object_id = OBJECT_ID(N'dbo.jobs'))
IF NOT EXISTS (SELECT 1 FROM sys.indexes AS i JOIN sys.index_columns AS ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id WHERE i.object_id = OBJECT_ID(N'dbo.jobs') AND i.name = N'ix_jobs_ready' AND c.name = N'stage_tag')
BEGIN
  IF CAST(SERVERPROPERTY('EngineEdition') AS INT) IN (3, 5, 8)
    CREATE INDEX [ix_jobs_ready] ON [dbo].[jobs] ([id] ASC) INCLUDE ([due_at], [priority], [stage_tag]) WHERE [state] = 'ready' WITH (DROP_EXISTING = ON, ONLINE = ON)
  ELSE
    CREATE INDEX [ix_jobs_ready] ON [dbo].[jobs] ([id] ASC) INCLUDE ([due_at], [priority], [stage_tag]) WHERE [state] = 'ready' WITH (DROP_EXISTING = ON)
END
