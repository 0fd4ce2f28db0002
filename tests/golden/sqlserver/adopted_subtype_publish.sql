INSERT INTO [dbo].[Notification_Email] ([EnqueuedAt], [Address], [Subject]) SELECT [EnqueuedAt], [Address], [Subject] FROM [dbo].[Notification_Email_sqlqueue_staging] WHERE [stage_tag] = ?
