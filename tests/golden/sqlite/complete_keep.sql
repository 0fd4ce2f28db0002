UPDATE "jobs" SET "state" = 'done', "completed_at" = strftime('%Y-%m-%d %H:%M:%f', 'now'), "lease_until" = NULL WHERE "state" = 'claimed' AND "consumer" = ? AND "claim_seq" <= ?
