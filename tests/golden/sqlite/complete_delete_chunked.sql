DELETE FROM "jobs" WHERE "id" IN (SELECT "id" FROM "jobs" WHERE "state" = 'claimed' AND "consumer" = ? AND "claim_seq" <= ? LIMIT ?)
