DO $$
DECLARE
  moved_rows bigint;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('"ix_jobs_staged"')) THEN
    RETURN;
  END IF;
  LOOP
    WITH "moved" AS (
      DELETE FROM "jobs" WHERE "id" IN (SELECT "id" FROM "jobs" WHERE "state" = 'staged' ORDER BY "id" LIMIT 4000)
      RETURNING "stage_tag", "priority", "due_at", "dedup_key", "max_attempts", "payload"
    )
    INSERT INTO "jobs_staging" ("stage_tag", "priority", "due_at", "dedup_key", "max_attempts", "payload") SELECT "stage_tag", "priority", "due_at", "dedup_key", "max_attempts", "payload" FROM "moved";
    GET DIAGNOSTICS moved_rows = ROW_COUNT;
    COMMIT;
    EXIT WHEN moved_rows < 4000;
  END LOOP;
END $$
