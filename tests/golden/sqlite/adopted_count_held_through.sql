SELECT COUNT(*) FROM "jobs_sqlqueue_claims" WHERE "sqlqueue_consumer" = ? AND "sqlqueue_claim_seq" <= ?
