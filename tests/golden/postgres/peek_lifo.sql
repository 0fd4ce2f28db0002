SELECT "id", "enqueued_at", "attempts", "payload" FROM "jobs" WHERE "state" = 'ready' AND "due_at" <= now() ORDER BY "id" DESC LIMIT %s
