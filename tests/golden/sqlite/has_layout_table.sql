SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jobs_layout') THEN 0 ELSE 1 END
