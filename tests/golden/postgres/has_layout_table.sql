SELECT CASE WHEN to_regclass('"jobs_layout"') IS NULL THEN 0 ELSE 1 END
