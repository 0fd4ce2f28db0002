UPDATE "jobs" SET "state" = 'failed', "last_error" = %s, "completed_at" = now(), "lease_until" = NULL WHERE "id" = %s AND "state" = 'claimed' AND "attempts" = %s
