SELECT 1 FROM [dbo].[jobs] WITH (UPDLOCK, ROWLOCK) WHERE [EnqueuedAt] = ?
