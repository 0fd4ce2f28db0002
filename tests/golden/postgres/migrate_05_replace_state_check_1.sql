DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('"ix_jobs_staged"')) AND NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass('"jobs"') AND conname = 'ck_jobs_state' AND position('staged' in pg_get_constraintdef(oid)) = 0) THEN
    ALTER TABLE "jobs" DROP CONSTRAINT IF EXISTS "ck_jobs_state";
    ALTER TABLE "jobs" ADD CONSTRAINT "ck_jobs_state" CHECK ("state" IN ('ready', 'claimed', 'done', 'failed')) NOT VALID;
  END IF;
END $$
