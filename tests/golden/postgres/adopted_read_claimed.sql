SELECT "Id", "Payload" FROM "jobs_sqlqueue_claims" WHERE "sqlqueue_consumer" = %s AND "sqlqueue_claim_seq" > %s AND "sqlqueue_claim_seq" <= %s AND "sqlqueue_row" BETWEEN %s AND %s
