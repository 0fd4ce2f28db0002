DELETE FROM "jobs" WHERE "id" IN (SELECT "id" FROM "jobs" WHERE "state" = 'failed' AND "completed_at" < ? LIMIT ?)
