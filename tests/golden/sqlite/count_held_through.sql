SELECT COUNT(*) FROM "jobs" WHERE "state" = 'claimed' AND "consumer" = ? AND "claim_seq" <= ?
