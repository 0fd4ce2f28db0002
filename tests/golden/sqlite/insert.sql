INSERT INTO "jobs" ("payload") VALUES (?)
