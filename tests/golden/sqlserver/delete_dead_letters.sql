DELETE FROM [dbo].[jobs] WITH (ROWLOCK) WHERE [state] = 'failed' AND [stage_tag] = ? AND [id] BETWEEN ? AND ?
