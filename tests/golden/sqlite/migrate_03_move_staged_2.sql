DELETE FROM "jobs" WHERE "id" IN (SELECT "id" FROM "jobs" WHERE "state" = 'staged' ORDER BY "id" LIMIT ?)
