INSERT INTO [dbo].[jobs] ([payload]) VALUES (?)
