SELECT "id", "enqueued_at", "attempts", "payload" FROM "jobs" WHERE "state" = 'claimed' AND "consumer" = ? AND "claim_seq" > ? AND "claim_seq" <= ? AND "id" BETWEEN ? AND ?
