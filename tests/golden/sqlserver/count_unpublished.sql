SELECT (SELECT COUNT(*) FROM [dbo].[jobs_staging]) + (SELECT COALESCE(SUM([row_count]), 0) FROM [dbo].[jobs_unpublished])
