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
)
