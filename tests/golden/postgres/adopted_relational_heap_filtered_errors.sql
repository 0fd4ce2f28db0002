SELECT SUBSTRING("Error", 1, 120), COUNT(*) FROM "jobs" WHERE "Status" = 'Failed' AND (Type = 'Sync') GROUP BY SUBSTRING("Error", 1, 120) ORDER BY COUNT(*) DESC
