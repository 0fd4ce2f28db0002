SELECT COUNT(*) FROM "jobs" WHERE "state" = 'claimed'
