DELETE FROM "jobs" WHERE "id" > %s AND "id" <= %s AND "stage_tag" = %s
