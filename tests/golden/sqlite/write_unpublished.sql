INSERT INTO "jobs" ("payload", "stage_tag") VALUES (?, ?)
