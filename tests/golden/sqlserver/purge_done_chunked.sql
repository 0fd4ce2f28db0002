DELETE TOP (?) FROM [dbo].[jobs] WITH (ROWLOCK) WHERE [state] = 'done' AND [completed_at] < ?
