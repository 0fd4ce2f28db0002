CREATE TEMP TABLE sqlqueue_scratch AS SELECT "payload", "dedup_key" FROM "jobs" WHERE 1 = 0
