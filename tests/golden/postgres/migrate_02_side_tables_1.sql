CREATE UNLOGGED TABLE IF NOT EXISTS "jobs_staging" (
  "stage_tag" varchar(400) NOT NULL,
  "priority" integer,
  "due_at" timestamptz,
  "dedup_key" varchar(400),
  "max_attempts" integer,
  "payload" text
)
