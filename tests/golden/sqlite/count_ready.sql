SELECT COUNT(*) FROM "jobs" WHERE "state" = 'ready' AND "due_at" <= strftime('%Y-%m-%d %H:%M:%f', 'now')
