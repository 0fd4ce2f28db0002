DELETE FROM "jobs" WHERE "state" = 'staged' AND "stage_tag" >= ? AND "stage_tag" <= ?
