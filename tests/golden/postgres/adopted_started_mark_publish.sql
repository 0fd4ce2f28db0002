INSERT INTO "jobs" ("Payload", "ProcessingStartedAt") SELECT "Payload", NULL FROM "jobs_sqlqueue_staging" WHERE "stage_tag" = %s
