INSERT INTO [dbo].[jobs] ([payload], [stage_tag]) VALUES (?, ?)
