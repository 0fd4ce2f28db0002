SELECT COUNT(*) FROM [dbo].[jobs] WHERE [state] = 'ready' AND [due_at] <= SYSUTCDATETIME()
