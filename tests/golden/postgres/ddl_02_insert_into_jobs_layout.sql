INSERT INTO "jobs_layout" ("layout") SELECT 3 WHERE NOT EXISTS (SELECT 1 FROM "jobs_layout" WHERE "layout" = 3) AND to_regclass('"jobs"') IS NULL
