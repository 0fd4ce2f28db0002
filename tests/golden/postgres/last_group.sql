SELECT MAX("customer_id") FROM "jobs" WHERE "state" = 'claimed' AND "consumer" = %s AND "claim_seq" = %s
