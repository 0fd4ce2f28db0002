IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_tag' AND object_id = OBJECT_ID(N'dbo.jobs'))
BEGIN
  IF CAST(SERVERPROPERTY('EngineEdition') AS INT) IN (3, 5, 8)
    CREATE INDEX [ix_jobs_tag] ON [dbo].[jobs] ([stage_tag]) WHERE [stage_tag] IS NOT NULL WITH (ONLINE = ON)
  ELSE
    CREATE INDEX [ix_jobs_tag] ON [dbo].[jobs] ([stage_tag]) WHERE [stage_tag] IS NOT NULL
END
