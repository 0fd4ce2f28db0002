SELECT [id], [payload], [attempts], [last_error], [enqueued_at], [completed_at], [consumer] FROM [dbo].[jobs] WHERE [state] = 'failed' AND [stage_tag] = ? AND [id] BETWEEN ? AND ? ORDER BY [id]
