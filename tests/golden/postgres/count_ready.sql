SELECT COUNT(*) FROM "jobs" WHERE "state" = 'ready' AND "due_at" <= now()
