IF NOT EXISTS (SELECT 1 FROM sys.columns WHERE object_id = OBJECT_ID(N'dbo.jobs') AND name = N'stage_tag')
ALTER TABLE [dbo].[jobs] ADD [stage_tag] NVARCHAR(400)
