DELETE TOP (?) FROM [dbo].[jobs_sqlqueue_claims] WITH (ROWLOCK) WHERE [sqlqueue_consumer] = ? AND [sqlqueue_claim_seq] <= ?
