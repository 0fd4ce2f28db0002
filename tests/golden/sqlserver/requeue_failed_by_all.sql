UPDATE [dbo].[jobs] WITH (ROWLOCK) SET [state] = 'ready', [attempts] = 0, [due_at] = SYSUTCDATETIME(), [consumer] = NULL, [claim_seq] = NULL, [completed_at] = NULL WHERE [state] = 'failed'
