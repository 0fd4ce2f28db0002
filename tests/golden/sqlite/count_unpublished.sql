SELECT (SELECT COUNT(*) FROM "jobs_staging") + (SELECT COALESCE(SUM("row_count"), 0) FROM "jobs_unpublished")
