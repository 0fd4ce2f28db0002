UPDATE [dbo].[jobs] WITH (ROWLOCK) SET [state] = 'failed', [last_error] = ?, [completed_at] = SYSUTCDATETIME(), [lease_until] = NULL WHERE [id] = ? AND [state] = 'claimed' AND [attempts] = ?
