SELECT COUNT(*) FROM "jobs_sqlqueue_claims" WHERE "sqlqueue_consumer" = %s AND "sqlqueue_claim_seq" <= %s
