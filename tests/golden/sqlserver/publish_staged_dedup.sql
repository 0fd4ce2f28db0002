INSERT INTO [dbo].[jobs] ([payload], [dedup_key])
SELECT s.[payload], s.[dedup_key]
FROM (
  SELECT [payload], [dedup_key], ROW_NUMBER() OVER (PARTITION BY [dedup_key] ORDER BY (SELECT NULL)) AS [copy_no]
  FROM [dbo].[jobs_staging]
  WHERE [stage_tag] = ?
) AS s
WHERE (s.[dedup_key] IS NULL OR s.[copy_no] = 1)
  AND NOT EXISTS (
    SELECT 1 FROM [dbo].[jobs] AS q WITH (UPDLOCK, HOLDLOCK)
    WHERE q.[dedup_key] IS NOT NULL AND q.[dedup_key] = s.[dedup_key]
  )
