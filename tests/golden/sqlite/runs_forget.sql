DELETE FROM "jobs_claims" WHERE "sqlqueue_consumer" = ? AND "sqlqueue_claim_seq" <= ?
