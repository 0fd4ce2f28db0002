DELETE FROM "jobs" WHERE "id" = %s AND "state" = 'claimed' AND "attempts" = %s
