INSERT INTO "jobs" ("payload", "dedup_key") SELECT "payload", "dedup_key" FROM "jobs_staging" WHERE "stage_tag" = ? ON CONFLICT DO NOTHING
