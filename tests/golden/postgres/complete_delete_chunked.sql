DELETE FROM "jobs" WHERE "id" IN (SELECT "id" FROM "jobs" WHERE "state" = 'claimed' AND "consumer" = %s AND "claim_seq" <= %s LIMIT %s)
