SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'ix_jobs_staged' AND NOT EXISTS (SELECT 1 FROM "jobs" WHERE "state" = 'staged')
