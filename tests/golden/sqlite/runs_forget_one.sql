DELETE FROM "jobs_claims" WHERE "sqlqueue_consumer" = ? AND "sqlqueue_claim_seq" = ? AND "sqlqueue_first_id" = ?
