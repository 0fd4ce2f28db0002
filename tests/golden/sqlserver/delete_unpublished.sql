DELETE FROM [dbo].[jobs_unpublished] WITH (ROWLOCK) WHERE [stage_tag] = ?
