SELECT "id", "enqueued_at", "attempts", "payload" FROM "jobs" WHERE "state" = 'claimed' AND "consumer" = %s AND "claim_seq" > %s AND "claim_seq" <= %s AND "id" BETWEEN %s AND %s
