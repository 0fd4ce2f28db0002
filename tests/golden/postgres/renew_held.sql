UPDATE "jobs" SET "lease_until" = now() + %s * INTERVAL '1 second' WHERE "state" = 'claimed' AND "consumer" = %s AND "claim_seq" > %s AND "lease_until" < now() + %s * INTERVAL '1 second'
