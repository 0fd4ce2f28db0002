SELECT "state", COUNT(*), MIN("enqueued_at") FROM "jobs" GROUP BY "state"
