DELETE FROM [dbo].[jobs_unpublished] WHERE [stage_tag] = ?
