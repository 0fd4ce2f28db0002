DELETE TOP (?) FROM [dbo].[jobs] WHERE [state] = 'done' AND [completed_at] < ?
