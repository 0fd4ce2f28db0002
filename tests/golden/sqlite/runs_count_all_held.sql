SELECT COALESCE(SUM("sqlqueue_last_id" - "sqlqueue_first_id" + 1), 0) FROM "jobs_claims"
