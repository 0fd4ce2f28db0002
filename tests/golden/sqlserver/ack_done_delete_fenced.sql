DELETE FROM [dbo].[jobs] WITH (ROWLOCK) WHERE [id] = ? AND [state] = 'claimed' AND [attempts] = ?
