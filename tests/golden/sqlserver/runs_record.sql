INSERT INTO [dbo].[jobs_claims] ([sqlqueue_consumer], [sqlqueue_claim_seq], [sqlqueue_first_id], [sqlqueue_last_id], [sqlqueue_lease_until]) VALUES (?, ?, ?, ?, DATEADD(SECOND, ?, SYSUTCDATETIME()))
