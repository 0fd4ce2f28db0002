SELECT "in_process", COUNT(*) FROM "jobs" GROUP BY "in_process"
