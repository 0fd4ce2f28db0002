SELECT COUNT(*) FROM [dbo].[jobs_staging]
