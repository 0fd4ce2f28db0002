DELETE FROM "jobs" WHERE "Id" IN (SELECT "Id" FROM "jobs" WHERE 1 = 1 LIMIT ?) RETURNING "Id", "Payload"
