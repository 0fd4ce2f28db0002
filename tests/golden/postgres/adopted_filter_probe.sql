SELECT 1 FROM "jobs" WHERE 1 = 0 AND (Type LIKE '%%:orders')
