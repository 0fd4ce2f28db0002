DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('"ix_jobs_ready_next"') AND indisvalid) THEN
    DROP INDEX IF EXISTS "ix_jobs_ready";
    ALTER INDEX "ix_jobs_ready_next" RENAME TO "ix_jobs_ready";
  END IF;
END $$
