SELECT COUNT(*) FROM "jobs_staging" WHERE "stage_tag" = %s
