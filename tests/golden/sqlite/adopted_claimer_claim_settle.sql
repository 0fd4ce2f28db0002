UPDATE "jobs_sqlqueue_claims" SET "start_date" = (SELECT t."start_date" FROM "jobs" AS t WHERE t."id" = "jobs_sqlqueue_claims"."id") WHERE "sqlqueue_consumer" = ? AND "sqlqueue_claim_seq" = ?
