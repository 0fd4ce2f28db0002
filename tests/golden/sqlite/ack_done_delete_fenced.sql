DELETE FROM "jobs" WHERE "id" = ? AND "state" = 'claimed' AND "attempts" = ?
