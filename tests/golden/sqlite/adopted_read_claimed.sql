SELECT "Id", "Payload" FROM "jobs_sqlqueue_claims" WHERE "sqlqueue_consumer" = ? AND "sqlqueue_claim_seq" > ? AND "sqlqueue_claim_seq" <= ? AND "sqlqueue_row" BETWEEN ? AND ?
