SELECT COUNT(*) FROM "jobs_sqlqueue_claims"
