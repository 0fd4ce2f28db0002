SELECT [Status], COUNT(*) FROM [dbo].[jobs] WHERE (Type = 'Sync') GROUP BY [Status]
