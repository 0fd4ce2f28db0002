SELECT DATEDIFF_BIG(MILLISECOND, [enqueued_at], [claimed_at]) FROM [dbo].[jobs] WHERE [state] = 'claimed'
