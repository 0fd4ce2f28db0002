-- Generated from sqlqueue's sqlite dialect (sqlqueue migrate --print); do not edit by hand.
-- Regenerate: SQLQUEUE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_ddl_scripts.py
-- sqlqueue migrate: queue jobs from layout 1 to layout 3 (sqlite; domain columns payload, ready index for fifo claims).
-- Stop every job of the earlier sqlqueue first. Each step checks the catalog before it changes
-- anything, so the script can run again after an interruption; the layout is recorded last.
-- SQLite has no conditional DDL: `sqlqueue migrate` checks what each step needs; here, a step
-- that could fail on a table that has what it adds is left commented, with the query that says.

-- Step 1/8: add the stage_tag column where missing
-- Only if this returns 1: SELECT COUNT(*) = 0 FROM pragma_table_info('jobs') WHERE name = 'stage_tag';
-- ALTER TABLE "jobs" ADD COLUMN "stage_tag" VARCHAR(200);

-- Step 2/8: create jobs_staging, jobs_unpublished, sqlqueue_sink_ledger, jobs_layout where missing
CREATE TABLE IF NOT EXISTS "jobs_staging" (
  "stage_tag" VARCHAR(200) NOT NULL,
  "priority" INT,
  "due_at" TIMESTAMP,
  "dedup_key" VARCHAR(200),
  "max_attempts" INT,
  "payload" TEXT
);

CREATE INDEX IF NOT EXISTS "ix_jobs_staging_tag" ON "jobs_staging" ("stage_tag");

CREATE TABLE IF NOT EXISTS "jobs_unpublished" (
  "stage_tag" VARCHAR(200) NOT NULL,
  "id_after" BIGINT NOT NULL,
  "id_upto" BIGINT NOT NULL,
  "row_count" BIGINT NOT NULL,
  CONSTRAINT "pk_jobs_unpublished" PRIMARY KEY ("stage_tag")
);

CREATE TABLE IF NOT EXISTS "sqlqueue_sink_ledger" (
  "queue_name" VARCHAR(200) NOT NULL,
  "writer_id" VARCHAR(200) NOT NULL,
  "batch_id" BIGINT NOT NULL,
  "row_count" BIGINT NOT NULL,
  "committed_at" TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  CONSTRAINT "pk_sqlqueue_sink_ledger" PRIMARY KEY ("queue_name", "writer_id", "batch_id")
);

CREATE TABLE IF NOT EXISTS "jobs_layout" (
  "layout" INT NOT NULL,
  "recorded_at" TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  CONSTRAINT "pk_jobs_layout" PRIMARY KEY ("layout")
);

-- Step 3/8: move rows of uncommitted sink batches (state 'staged') into jobs_staging
INSERT INTO "jobs_staging" ("stage_tag", "priority", "due_at", "dedup_key", "max_attempts", "payload") SELECT "stage_tag", "priority", "due_at", "dedup_key", "max_attempts", "payload" FROM "jobs" WHERE "state" = 'staged';

DELETE FROM "jobs" WHERE "state" = 'staged';

-- Step 4/8: drop ix_jobs_staged once no row is staged
DROP INDEX IF EXISTS "ix_jobs_staged";

-- Step 5/8: rebuild ix_jobs_ready to cover stage_tag
DROP INDEX IF EXISTS "ix_jobs_ready";

CREATE INDEX IF NOT EXISTS "ix_jobs_ready" ON "jobs" ("id" ASC, "due_at", "priority", "stage_tag") WHERE "state" = 'ready';

-- Step 6/8: drop ix_jobs_tag
DROP INDEX IF EXISTS "ix_jobs_tag";

-- Step 7/8: create jobs_claims, where claims hold runs of ids, where missing
CREATE TABLE IF NOT EXISTS "jobs_claims" (
  "sqlqueue_consumer" VARCHAR(200) NOT NULL,
  "sqlqueue_claim_seq" BIGINT NOT NULL,
  "sqlqueue_first_id" BIGINT NOT NULL,
  "sqlqueue_last_id" BIGINT NOT NULL,
  "sqlqueue_claimed_at" TIMESTAMP DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')) NOT NULL,
  "sqlqueue_lease_until" TIMESTAMP NOT NULL,
  CONSTRAINT "pk_jobs_claims" PRIMARY KEY ("sqlqueue_consumer", "sqlqueue_claim_seq", "sqlqueue_first_id")
);

CREATE UNIQUE INDEX IF NOT EXISTS "ux_jobs_claims_first" ON "jobs_claims" ("sqlqueue_first_id", "sqlqueue_last_id");

-- Step 8/8: record layout 3 in jobs_layout
INSERT INTO "jobs_layout" ("layout") SELECT 3 WHERE NOT EXISTS (SELECT 1 FROM "jobs_layout" WHERE "layout" = 3) AND NOT EXISTS (SELECT 1 FROM "jobs" WHERE "state" = 'staged') AND EXISTS (SELECT 1 FROM pragma_table_info('jobs') WHERE name = 'stage_tag');

