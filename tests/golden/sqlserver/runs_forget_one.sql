DELETE FROM [dbo].[jobs_claims] WITH (ROWLOCK) WHERE [sqlqueue_consumer] = ? AND [sqlqueue_claim_seq] = ? AND [sqlqueue_first_id] = ?
