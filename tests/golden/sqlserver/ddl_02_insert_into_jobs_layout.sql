INSERT INTO [dbo].[jobs_layout] ([layout]) SELECT 3 WHERE NOT EXISTS (SELECT 1 FROM [dbo].[jobs_layout] WHERE [layout] = 3) AND OBJECT_ID(N'dbo.jobs', N'U') IS NULL
