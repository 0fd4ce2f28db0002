SELECT MAX([id]) FROM [dbo].[jobs] WHERE [state] = 'ready' AND [due_at] <= SYSUTCDATETIME()
