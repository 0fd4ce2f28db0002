UPDATE "jobs" SET "state" = 'failed', "last_error" = ?, "completed_at" = strftime('%Y-%m-%d %H:%M:%f', 'now'), "lease_until" = NULL WHERE "id" = ? AND "state" = 'claimed' AND "attempts" = ?
