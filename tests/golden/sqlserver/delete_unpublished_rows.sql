DELETE FROM [dbo].[jobs] WHERE [id] > ? AND [id] <= ? AND [stage_tag] = ?
