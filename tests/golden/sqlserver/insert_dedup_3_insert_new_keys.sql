INSERT INTO [dbo].[jobs] ([payload], [dedup_key], [state], [stage_tag])
SELECT s.[payload], s.[dedup_key], s.[state], s.[stage_tag]
FROM (
  SELECT [payload], [dedup_key], [state], [stage_tag], ROW_NUMBER() OVER (PARTITION BY [dedup_key] ORDER BY (SELECT NULL)) AS [copy_no]
  FROM #sqlqueue_scratch
) AS s
WHERE (s.[dedup_key] IS NULL OR s.[copy_no] = 1)
  AND NOT EXISTS (
    SELECT 1 FROM [dbo].[jobs] AS q WITH (UPDLOCK, HOLDLOCK)
    WHERE q.[dedup_key] IS NOT NULL AND q.[dedup_key] = s.[dedup_key]
  )
