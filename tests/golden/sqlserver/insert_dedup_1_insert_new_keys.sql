INSERT INTO [dbo].[jobs] ([payload], [dedup_key])
SELECT s.[payload], s.[dedup_key]
FROM (
  SELECT [payload], [dedup_key], ROW_NUMBER() OVER (PARTITION BY [dedup_key] ORDER BY (SELECT NULL)) AS [copy_no]
  FROM (
  SELECT r.[c0] AS [payload], r.[c1] AS [dedup_key]
  FROM OPENJSON(CAST(? AS NVARCHAR(MAX)))
  WITH ([n] BIGINT '$.n', [c0] NVARCHAR(MAX) '$.c0', [c1] NVARCHAR(MAX) '$.c1') AS r
) AS [rows]
  WHERE 1 = 1
) AS s
WHERE (s.[dedup_key] IS NULL OR s.[copy_no] = 1)
  AND NOT EXISTS (
    SELECT 1 FROM [dbo].[jobs] AS q WITH (UPDLOCK, HOLDLOCK)
    WHERE q.[dedup_key] IS NOT NULL AND q.[dedup_key] = s.[dedup_key]
  )
