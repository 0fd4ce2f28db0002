SELECT COALESCE(SUM("sqlqueue_last_id" - "sqlqueue_first_id" + 1), 0) FROM "jobs_claims" WHERE "sqlqueue_consumer" = %s AND "sqlqueue_claim_seq" > %s AND "sqlqueue_claim_seq" <= %s
