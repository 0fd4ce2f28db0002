CREATE TABLE IF NOT EXISTS "jobs_staging" (
  "stage_tag" VARCHAR(200) NOT NULL,
  "priority" INT,
  "due_at" TIMESTAMP,
  "dedup_key" VARCHAR(200),
  "max_attempts" INT,
  "payload" TEXT
)
