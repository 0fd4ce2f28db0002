SELECT COUNT(*), NULL FROM "jobs" WHERE "ProcessingStartedAt" IS NULL
