DELETE FROM [dbo].[jobs] WHERE [state] = 'staged' AND [stage_tag] >= ? AND [stage_tag] <= ?
