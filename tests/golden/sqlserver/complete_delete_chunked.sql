DELETE TOP (?) FROM [dbo].[jobs] WITH (ROWLOCK) WHERE [state] = 'claimed' AND [consumer] = ? AND [claim_seq] <= ?
