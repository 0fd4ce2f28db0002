WITH [batch] AS (
  SELECT TOP (?) * FROM [dbo].[jobs] WITH (ROWLOCK, READPAST, READCOMMITTEDLOCK, UPDLOCK)
  WHERE [state] = 'ready' AND [due_at] <= SYSUTCDATETIME() AND [id] <= ?
  ORDER BY [id] ASC
)
UPDATE [batch]
SET [state] = 'claimed', [consumer] = ?, [claim_seq] = ?, [attempts] = [attempts] + 1, [claimed_at] = SYSUTCDATETIME(), [lease_until] = DATEADD(SECOND, ?, SYSUTCDATETIME())
OUTPUT inserted.[id]
