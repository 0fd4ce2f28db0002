-- Generated from sqlqueue's sqlite dialect (Dialect.create_statements); do not edit by hand.
-- Example queue jobs: lifecycle columns, domain column 'payload text', fifo claim order; plus the sink ledger.
-- Re-runnable (idempotent): each statement creates only what is missing. The layout is recorded
-- only when this creates the queue table: one an earlier sqlqueue made needs `sqlqueue migrate`.
-- Regenerate: SQLQUEUE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_ddl_scripts.py

CREATE TABLE IF NOT EXISTS "jobs_layout" (
  "layout" INT NOT NULL,
  "recorded_at" TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  CONSTRAINT "pk_jobs_layout" PRIMARY KEY ("layout")
);

INSERT INTO "jobs_layout" ("layout") SELECT 3 WHERE NOT EXISTS (SELECT 1 FROM "jobs_layout" WHERE "layout" = 3) AND NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jobs');

CREATE TABLE IF NOT EXISTS "jobs" (
  "id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
  "state" VARCHAR(200) DEFAULT 'ready' NOT NULL,
  "priority" INT DEFAULT 0 NOT NULL,
  "enqueued_at" TIMESTAMP DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')) NOT NULL,
  "due_at" TIMESTAMP DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')) NOT NULL,
  "attempts" INT DEFAULT 0 NOT NULL,
  "max_attempts" INT,
  "consumer" VARCHAR(200),
  "claim_seq" BIGINT,
  "claimed_at" TIMESTAMP,
  "lease_until" TIMESTAMP,
  "completed_at" TIMESTAMP,
  "last_error" TEXT,
  "dedup_key" VARCHAR(200),
  "stage_tag" VARCHAR(200),
  "payload" TEXT,
  CONSTRAINT "ck_jobs_state" CHECK ("state" IN ('ready', 'claimed', 'done', 'failed'))
);

CREATE INDEX IF NOT EXISTS "ix_jobs_ready" ON "jobs" ("id" ASC, "due_at", "priority", "stage_tag") WHERE "state" = 'ready';

CREATE INDEX IF NOT EXISTS "ix_jobs_claimed" ON "jobs" ("consumer", "claim_seq", "lease_until") WHERE "state" = 'claimed';

CREATE INDEX IF NOT EXISTS "ix_jobs_done" ON "jobs" ("completed_at") WHERE "state" = 'done';

CREATE UNIQUE INDEX IF NOT EXISTS "ux_jobs_dedup" ON "jobs" ("dedup_key") WHERE "dedup_key" IS NOT NULL;

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
