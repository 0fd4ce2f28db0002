CREATE TABLE IF NOT EXISTS "jobs_layout" (
  "layout" integer NOT NULL,
  "recorded_at" timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT "pk_jobs_layout" PRIMARY KEY ("layout")
)
