SELECT COUNT(*) FROM [dbo].[jobs] WHERE [state] = 'claimed'
