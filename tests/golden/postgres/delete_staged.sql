DELETE FROM "jobs_staging" WHERE "stage_tag" >= %s AND "stage_tag" <= %s
