SELECT COUNT(*) FROM [dbo].[jobs] WHERE [state] = 'claimed' AND [consumer] = ? AND [claim_seq] <= ?
