INSERT INTO "jobs" ("Payload") SELECT "Payload" FROM "jobs_sqlqueue_staging" WHERE "stage_tag" = %s
