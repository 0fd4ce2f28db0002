SELECT COUNT(*) FROM "jobs_staging"
