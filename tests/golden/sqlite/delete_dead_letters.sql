DELETE FROM "jobs" WHERE "state" = 'failed' AND "stage_tag" = ? AND "id" BETWEEN ? AND ?
