INSERT INTO [dbo].[jobs] ([Payload], [ProcessingStartedAt]) SELECT [Payload], NULL FROM [dbo].[jobs_sqlqueue_staging] WHERE [stage_tag] = ?
