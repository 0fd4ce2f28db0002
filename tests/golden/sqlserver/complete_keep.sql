UPDATE [dbo].[jobs] WITH (ROWLOCK) SET [state] = 'done', [completed_at] = SYSUTCDATETIME(), [lease_until] = NULL WHERE [state] = 'claimed' AND [consumer] = ? AND [claim_seq] <= ?
