DELETE FROM [dbo].[jobs] WITH (ROWLOCK) WHERE [id] > ? AND [id] <= ? AND [stage_tag] = ?
