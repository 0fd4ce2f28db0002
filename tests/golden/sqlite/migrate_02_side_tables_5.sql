CREATE TABLE IF NOT EXISTS "jobs_layout" (
  "layout" INT NOT NULL,
  "recorded_at" TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  CONSTRAINT "pk_jobs_layout" PRIMARY KEY ("layout")
)
