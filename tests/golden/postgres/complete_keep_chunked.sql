UPDATE "jobs" SET "state" = 'done', "completed_at" = now(), "lease_until" = NULL WHERE "id" IN (SELECT "id" FROM "jobs" WHERE "state" = 'claimed' AND "consumer" = %s AND "claim_seq" <= %s LIMIT %s)
