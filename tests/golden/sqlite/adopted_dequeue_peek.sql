SELECT "Id", "Payload" FROM "jobs" WHERE 1 = 1 ORDER BY "Id" ASC LIMIT ?
