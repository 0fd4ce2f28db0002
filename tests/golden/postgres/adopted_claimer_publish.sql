INSERT INTO "jobs" ("reputation", "scheduled_start_date", "attempts") SELECT "reputation", COALESCE("scheduled_start_date", LOCALTIMESTAMP), 0 FROM "jobs_sqlqueue_staging" WHERE "stage_tag" = %s
