SELECT "id", "enqueued_at", "attempts", "payload" FROM "jobs" WHERE "state" = 'ready' AND "due_at" <= strftime('%Y-%m-%d %H:%M:%f', 'now') ORDER BY "id" DESC LIMIT ?
