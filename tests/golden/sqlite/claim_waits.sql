SELECT CAST(ROUND((julianday("claimed_at") - julianday("enqueued_at")) * 86400000) AS INTEGER) FROM "jobs" WHERE "state" = 'claimed' AND "consumer" = ? AND "claim_seq" = ?
