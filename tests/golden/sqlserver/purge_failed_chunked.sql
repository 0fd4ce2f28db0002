DELETE TOP (?) FROM [dbo].[jobs] WITH (ROWLOCK) WHERE [state] = 'failed' AND [completed_at] < ?
