SELECT 1 FROM [dbo].[jobs] WHERE 1 = 0 AND (Type LIKE '%:orders')
