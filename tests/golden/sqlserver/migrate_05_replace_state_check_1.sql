IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_staged' AND object_id = OBJECT_ID(N'dbo.jobs'))
IF NOT EXISTS (SELECT 1 FROM sys.check_constraints WHERE parent_object_id = OBJECT_ID(N'dbo.jobs') AND name = N'ck_jobs_state' AND CHARINDEX(N'staged', [definition]) = 0)
BEGIN
  IF EXISTS (SELECT 1 FROM sys.check_constraints WHERE parent_object_id = OBJECT_ID(N'dbo.jobs') AND name = N'ck_jobs_state')
    ALTER TABLE [dbo].[jobs] DROP CONSTRAINT [ck_jobs_state]
  ALTER TABLE [dbo].[jobs] WITH NOCHECK ADD CONSTRAINT [ck_jobs_state] CHECK ([state] IN ('ready', 'claimed', 'done', 'failed'))
END
