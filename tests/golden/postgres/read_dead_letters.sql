SELECT "id", "payload", "attempts", "last_error", "enqueued_at", "completed_at", "consumer" FROM "jobs" WHERE "state" = 'failed' AND "stage_tag" = %s AND "id" BETWEEN %s AND %s ORDER BY "id"
