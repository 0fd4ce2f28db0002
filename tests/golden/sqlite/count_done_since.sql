SELECT COUNT(*) FROM "jobs" WHERE "state" = 'done' AND "completed_at" >= ?
