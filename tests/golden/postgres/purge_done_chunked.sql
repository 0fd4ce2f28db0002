DELETE FROM "jobs" WHERE "id" IN (SELECT "id" FROM "jobs" WHERE "state" = 'done' AND "completed_at" < %s LIMIT %s)
