SELECT "Id", "Payload", "ProcessingStartedAt", "Errors" FROM "jobs" WHERE "ProcessingStartedAt" IS NULL ORDER BY "Id" ASC LIMIT %s
