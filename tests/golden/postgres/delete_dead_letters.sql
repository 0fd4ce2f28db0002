DELETE FROM "jobs" WHERE "state" = 'failed' AND "stage_tag" = %s AND "id" BETWEEN %s AND %s
