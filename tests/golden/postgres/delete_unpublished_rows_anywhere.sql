DELETE FROM "jobs" WHERE "stage_tag" = %s
