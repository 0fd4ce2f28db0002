INSERT INTO [dbo].[jobs_staging] ([payload], [stage_tag])
SELECT r.[c0], r.[c1]
FROM OPENJSON(CAST(? AS NVARCHAR(MAX)))
  WITH ([n] BIGINT '$.n', [c0] NVARCHAR(MAX) '$.c0', [c1] NVARCHAR(MAX) '$.c1') AS r
ORDER BY r.[n]
