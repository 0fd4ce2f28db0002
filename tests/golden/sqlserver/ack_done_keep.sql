UPDATE [dbo].[jobs] SET [state] = 'done', [completed_at] = SYSUTCDATETIME(), [lease_until] = NULL WHERE [id] = ? AND [state] = 'claimed'
