SELECT COUNT(*) FROM [dbo].[jobs]
