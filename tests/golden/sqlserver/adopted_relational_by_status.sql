SELECT [Status], COUNT(*) FROM [dbo].[jobs] GROUP BY [Status]
