DELETE TOP (?) FROM [dbo].[jobs] WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK)
OUTPUT CAST(? AS NVARCHAR(400)), CAST(? AS BIGINT), deleted.[Id], deleted.[Payload]
INTO [dbo].[jobs_sqlqueue_claims] ([sqlqueue_consumer], [sqlqueue_claim_seq], [Id], [Payload])
WHERE 1 = 1
