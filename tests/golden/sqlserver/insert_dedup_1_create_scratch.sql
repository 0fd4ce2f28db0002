SELECT [payload], [dedup_key], [state], [stage_tag] INTO #sqlqueue_scratch FROM [dbo].[jobs] WHERE 1 = 0
