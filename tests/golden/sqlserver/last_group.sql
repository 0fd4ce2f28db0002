SELECT MAX([customer_id]) FROM [dbo].[jobs] WHERE [state] = 'claimed' AND [consumer] = ? AND [claim_seq] = ?
