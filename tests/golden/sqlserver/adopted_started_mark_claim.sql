UPDATE TOP (?) [dbo].[jobs]
SET [ProcessingStartedAt] = SYSUTCDATETIME()
OUTPUT CAST(? AS NVARCHAR(400)), CAST(? AS BIGINT), inserted.[Id], inserted.[Payload], inserted.[ProcessingStartedAt], inserted.[Errors]
INTO [dbo].[jobs_sqlqueue_claims] ([sqlqueue_consumer], [sqlqueue_claim_seq], [Id], [Payload], [ProcessingStartedAt], [Errors])
FROM [dbo].[jobs] WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK)
WHERE [ProcessingStartedAt] IS NULL
