SELECT COUNT(*) FROM "jobs" WHERE "consumer" = %s AND "claim_seq" = %s
