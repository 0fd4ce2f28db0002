DELETE FROM [dbo].[jobs] WITH (ROWLOCK) WHERE [stage_tag] = ?
