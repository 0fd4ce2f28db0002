SELECT MAX("customer_id") FROM "jobs" WHERE "state" = 'claimed' AND "consumer" = ? AND "claim_seq" = ?
