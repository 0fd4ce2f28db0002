SELECT "id", "enqueued_at", "attempts", "payload" FROM "jobs" WHERE "state" = 'ready' AND "due_at" <= now() ORDER BY "due_at" ASC, "id" ASC LIMIT %s
