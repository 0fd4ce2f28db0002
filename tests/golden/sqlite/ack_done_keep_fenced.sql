UPDATE "jobs" SET "state" = 'done', "completed_at" = strftime('%Y-%m-%d %H:%M:%f', 'now'), "lease_until" = NULL WHERE "id" = ? AND "state" = 'claimed' AND "attempts" = ?
