-- Generated from sqlqueue's postgres dialect (sqlqueue migrate --print); do not edit by hand.
-- Regenerate: SQLQUEUE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_ddl_scripts.py
-- sqlqueue migrate: queue jobs from layout 1 to layout 3 (postgres; domain columns payload, ready index for fifo claims).
-- Stop every job of the earlier sqlqueue first. Each step checks the catalog before it changes
-- anything, so the script can run again after an interruption; the layout is recorded last.
-- Run with psql -v ON_ERROR_STOP=1, not in one transaction (no -1): CREATE INDEX CONCURRENTLY and
-- the chunked move commit on their own. Consider SET lock_timeout = '10s' first.

-- Step 1/11: add the stage_tag column where missing
ALTER TABLE "jobs" ADD COLUMN IF NOT EXISTS "stage_tag" varchar(400);

-- Step 2/11: create jobs_staging, jobs_unpublished, sqlqueue_sink_ledger, jobs_layout where missing
CREATE UNLOGGED TABLE IF NOT EXISTS "jobs_staging" (
  "stage_tag" varchar(400) NOT NULL,
  "priority" integer,
  "due_at" timestamptz,
  "dedup_key" varchar(400),
  "max_attempts" integer,
  "payload" text
);

CREATE INDEX IF NOT EXISTS "ix_jobs_staging_tag" ON "jobs_staging" ("stage_tag");

CREATE TABLE IF NOT EXISTS "jobs_unpublished" (
  "stage_tag" varchar(400) NOT NULL,
  "id_after" bigint NOT NULL,
  "id_upto" bigint NOT NULL,
  "row_count" bigint NOT NULL,
  CONSTRAINT "pk_jobs_unpublished" PRIMARY KEY ("stage_tag")
);

CREATE TABLE IF NOT EXISTS "sqlqueue_sink_ledger" (
  "queue_name" varchar(400) NOT NULL,
  "writer_id" varchar(400) NOT NULL,
  "batch_id" bigint NOT NULL,
  "row_count" bigint NOT NULL,
  "committed_at" timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT "pk_sqlqueue_sink_ledger" PRIMARY KEY ("queue_name", "writer_id", "batch_id")
);

CREATE TABLE IF NOT EXISTS "jobs_layout" (
  "layout" integer NOT NULL,
  "recorded_at" timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT "pk_jobs_layout" PRIMARY KEY ("layout")
);

-- Step 3/11: move rows of uncommitted sink batches (state 'staged') into jobs_staging
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
END $$;

-- Step 4/11: drop ix_jobs_staged once no row is staged
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('"ix_jobs_staged"')) THEN
    IF NOT EXISTS (SELECT 1 FROM "jobs" WHERE "state" = 'staged') THEN
      DROP INDEX "ix_jobs_staged";
    END IF;
  END IF;
END $$;

-- Step 5/11: replace ck_jobs_state by one without 'staged'
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('"ix_jobs_staged"')) AND NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass('"jobs"') AND conname = 'ck_jobs_state' AND position('staged' in pg_get_constraintdef(oid)) = 0) THEN
    ALTER TABLE "jobs" DROP CONSTRAINT IF EXISTS "ck_jobs_state";
    ALTER TABLE "jobs" ADD CONSTRAINT "ck_jobs_state" CHECK ("state" IN ('ready', 'claimed', 'done', 'failed')) NOT VALID;
  END IF;
END $$;

-- Step 6/11: validate ck_jobs_state (reads the table, blocks no writer)
ALTER TABLE "jobs" VALIDATE CONSTRAINT "ck_jobs_state";

-- Step 7/11: build ix_jobs_ready_next: ix_jobs_ready without stage_tag, beside the old one (CONCURRENTLY)
DROP INDEX CONCURRENTLY IF EXISTS "ix_jobs_ready_next";

CREATE INDEX CONCURRENTLY IF NOT EXISTS "ix_jobs_ready_next" ON "jobs" ("id" ASC) INCLUDE ("due_at", "priority") WHERE "state" = 'ready';

-- Step 8/11: replace ix_jobs_ready by ix_jobs_ready_next
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_index WHERE indexrelid = to_regclass('"ix_jobs_ready_next"') AND indisvalid) THEN
    DROP INDEX IF EXISTS "ix_jobs_ready";
    ALTER INDEX "ix_jobs_ready_next" RENAME TO "ix_jobs_ready";
  END IF;
END $$;

-- Step 9/11: drop ix_jobs_tag
DROP INDEX CONCURRENTLY IF EXISTS "ix_jobs_tag";

-- Step 10/11: create jobs_claims, where claims hold runs of ids, where missing
CREATE TABLE IF NOT EXISTS "jobs_claims" (
  "sqlqueue_consumer" varchar(400) NOT NULL,
  "sqlqueue_claim_seq" bigint NOT NULL,
  "sqlqueue_first_id" bigint NOT NULL,
  "sqlqueue_last_id" bigint NOT NULL,
  "sqlqueue_claimed_at" timestamptz DEFAULT now() NOT NULL,
  "sqlqueue_lease_until" timestamptz NOT NULL,
  CONSTRAINT "pk_jobs_claims" PRIMARY KEY ("sqlqueue_consumer", "sqlqueue_claim_seq", "sqlqueue_first_id")
);

CREATE UNIQUE INDEX IF NOT EXISTS "ux_jobs_claims_first" ON "jobs_claims" ("sqlqueue_first_id") INCLUDE ("sqlqueue_last_id");

-- Step 11/11: record layout 3 in jobs_layout
INSERT INTO "jobs_layout" ("layout") SELECT 3 WHERE NOT EXISTS (SELECT 1 FROM "jobs_layout" WHERE "layout" = 3) AND EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass('"jobs"') AND conname = 'ck_jobs_state' AND convalidated AND position('staged' in pg_get_constraintdef(oid)) = 0);

