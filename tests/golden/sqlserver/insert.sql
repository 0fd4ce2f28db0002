INSERT INTO [dbo].[jobs] ([payload], [state], [stage_tag]) VALUES (?, ?, ?)
