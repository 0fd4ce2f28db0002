DELETE FROM [dbo].[jobs_staging] WITH (ROWLOCK) WHERE [stage_tag] >= ? AND [stage_tag] <= ?
