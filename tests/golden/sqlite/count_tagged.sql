SELECT COUNT(*) FROM "jobs" WHERE "consumer" = ? AND "claim_seq" = ?
