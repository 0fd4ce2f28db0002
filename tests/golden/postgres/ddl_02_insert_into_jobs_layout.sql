INSERT INTO "jobs_layout" ("layout") SELECT 2 WHERE NOT EXISTS (SELECT 1 FROM "jobs_layout" WHERE "layout" = 2) AND to_regclass('"jobs"') IS NULL
