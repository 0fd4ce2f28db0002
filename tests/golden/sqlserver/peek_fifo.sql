SELECT TOP (?) [id], [enqueued_at], [attempts], [payload] FROM [dbo].[jobs] WITH (READPAST, READCOMMITTEDLOCK) WHERE [state] = 'ready' AND [due_at] <= SYSUTCDATETIME() ORDER BY [id] ASC
