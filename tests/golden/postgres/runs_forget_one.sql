DELETE FROM "jobs_claims" WHERE "sqlqueue_consumer" = %s AND "sqlqueue_claim_seq" = %s AND "sqlqueue_first_id" = %s
