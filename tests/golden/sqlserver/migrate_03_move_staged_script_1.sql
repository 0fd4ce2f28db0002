IF EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_staged' AND object_id = OBJECT_ID(N'dbo.jobs'))
WHILE 1 = 1
BEGIN
  DELETE TOP (4000) FROM [dbo].[jobs] WITH (ROWLOCK)
  OUTPUT deleted.[stage_tag], deleted.[priority], deleted.[due_at], deleted.[dedup_key], deleted.[max_attempts], deleted.[payload]
  INTO [dbo].[jobs_staging] ([stage_tag], [priority], [due_at], [dedup_key], [max_attempts], [payload])
  WHERE [state] = 'staged'
  IF @@ROWCOUNT < 4000 BREAK
END
