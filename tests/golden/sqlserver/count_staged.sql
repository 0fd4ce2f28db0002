SELECT COUNT(*) FROM [dbo].[jobs_staging] WHERE [stage_tag] = ?
