SELECT "Status", COUNT(*) FROM "jobs" WHERE (Type = 'Sync') GROUP BY "Status"
