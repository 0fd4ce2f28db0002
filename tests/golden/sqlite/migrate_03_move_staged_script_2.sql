DELETE FROM "jobs" WHERE "state" = 'staged'
