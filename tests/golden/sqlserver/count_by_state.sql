SELECT [state], COUNT(*), MIN([enqueued_at]) FROM [dbo].[jobs] GROUP BY [state]
