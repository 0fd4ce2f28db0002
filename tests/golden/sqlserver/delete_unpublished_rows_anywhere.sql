DELETE FROM [dbo].[jobs] WHERE [stage_tag] = ?
