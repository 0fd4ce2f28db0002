SELECT "id", "enqueued_at", "attempts", "payload" FROM "jobs" WHERE "consumer" = ? AND "claim_seq" > ? AND "claim_seq" <= ? AND "id" BETWEEN ? AND ?
