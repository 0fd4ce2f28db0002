SELECT SUBSTRING([Error], 1, 120), COUNT(*) FROM [dbo].[jobs] WHERE [Status] = 'Failed' GROUP BY SUBSTRING([Error], 1, 120) ORDER BY COUNT(*) DESC
