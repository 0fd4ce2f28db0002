DELETE TOP (?) FROM [dbo].[jobs] WHERE [state] = 'failed' AND [completed_at] < ?
