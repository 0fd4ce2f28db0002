UPDATE "jobs" SET "stage_tag" = ? WHERE "id" IN (SELECT "id" FROM "jobs" WHERE "state" = 'failed' AND "stage_tag" IS NULL LIMIT ?) RETURNING "id"
