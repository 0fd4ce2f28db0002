INSERT INTO [dbo].[jobs] ([payload])
SELECT r.[c0]
FROM OPENJSON(CAST(? AS NVARCHAR(MAX)))
  WITH ([n] BIGINT '$.n', [c0] NVARCHAR(MAX) '$.c0') AS r
ORDER BY r.[n]
