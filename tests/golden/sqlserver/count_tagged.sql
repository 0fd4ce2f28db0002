SELECT COUNT(*) FROM [dbo].[jobs] WHERE [consumer] = ? AND [claim_seq] = ?
