SELECT "Status", COUNT(*) FROM "jobs" GROUP BY "Status"
