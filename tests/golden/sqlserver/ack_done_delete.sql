DELETE FROM [dbo].[jobs] WHERE [id] = ? AND [state] = 'claimed'
