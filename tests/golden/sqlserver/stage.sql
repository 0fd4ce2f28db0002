INSERT INTO [dbo].[jobs_staging] ([payload], [stage_tag]) VALUES (?, ?)
