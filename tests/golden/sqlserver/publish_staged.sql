INSERT INTO [dbo].[jobs] ([payload]) SELECT [payload] FROM [dbo].[jobs_staging] WHERE [stage_tag] = ?
