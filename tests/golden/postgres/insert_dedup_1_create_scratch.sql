CREATE TEMP TABLE sqlqueue_scratch AS SELECT "payload", "dedup_key", "state", "stage_tag" FROM "jobs" WHERE 1 = 0
