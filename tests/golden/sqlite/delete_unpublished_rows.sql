DELETE FROM "jobs" WHERE "id" > ? AND "id" <= ? AND "stage_tag" = ?
