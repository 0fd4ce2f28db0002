UPDATE TOP (?) [dbo].[jobs] WITH (ROWLOCK, READPAST, READCOMMITTEDLOCK)
SET [state] = 'claimed', [consumer] = ?, [claim_seq] = ?, [attempts] = [attempts] + 1, [claimed_at] = SYSUTCDATETIME(), [lease_until] = DATEADD(SECOND, ?, SYSUTCDATETIME())
OUTPUT inserted.[id]
WHERE [state] = 'ready' AND [due_at] <= SYSUTCDATETIME()
