UPDATE TOP (?) [dbo].[jobs]
SET [stage_tag] = ?
OUTPUT inserted.[id]
FROM [dbo].[jobs] WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK)
WHERE [state] = 'failed' AND [stage_tag] IS NULL
