INSERT INTO "jobs" ("payload", "state", "stage_tag") VALUES (?, ?, ?)
