SELECT [payload], [dedup_key] INTO #sqlqueue_scratch FROM [dbo].[jobs] WHERE 1 = 0
