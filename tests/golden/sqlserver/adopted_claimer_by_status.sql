SELECT [in_process], COUNT(*) FROM [dbo].[jobs] GROUP BY [in_process]
