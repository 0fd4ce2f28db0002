UPDATE "jobs" SET "state" = 'done', "completed_at" = now(), "lease_until" = NULL WHERE "id" = %s AND "state" = 'claimed' AND "attempts" = %s
