SELECT CAST(EXTRACT(EPOCH FROM ("claimed_at" - "enqueued_at")) * 1000 AS BIGINT) FROM "jobs" WHERE "state" = 'claimed' AND "consumer" = %s AND "claim_seq" = %s
