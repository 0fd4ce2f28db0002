DELETE FROM "jobs" WHERE "state" = 'staged' AND "stage_tag" >= %s AND "stage_tag" <= %s
