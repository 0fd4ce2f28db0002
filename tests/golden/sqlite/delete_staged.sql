DELETE FROM "jobs_staging" WHERE "stage_tag" >= ? AND "stage_tag" <= ?
