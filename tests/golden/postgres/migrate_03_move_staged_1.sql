WITH "moved" AS (
  DELETE FROM "jobs" WHERE "id" IN (SELECT "id" FROM "jobs" WHERE "state" = 'staged' ORDER BY "id" LIMIT %s)
  RETURNING "stage_tag", "priority", "due_at", "dedup_key", "max_attempts", "payload"
)
INSERT INTO "jobs_staging" ("stage_tag", "priority", "due_at", "dedup_key", "max_attempts", "payload") SELECT "stage_tag", "priority", "due_at", "dedup_key", "max_attempts", "payload" FROM "moved"
