INSERT INTO [dbo].[jobs] ([Payload]) SELECT [Payload] FROM [dbo].[jobs_sqlqueue_staging] WHERE [stage_tag] = ?
