INSERT INTO "jobs_staging" ("payload", "stage_tag") VALUES (?, ?)
