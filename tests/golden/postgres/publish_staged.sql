INSERT INTO "jobs" ("payload") SELECT "payload" FROM "jobs_staging" WHERE "stage_tag" = %s
