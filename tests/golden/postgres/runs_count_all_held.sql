SELECT COUNT(*) FROM "jobs" JOIN "jobs_claims" ON "jobs"."id" BETWEEN "jobs_claims"."sqlqueue_first_id" AND "jobs_claims"."sqlqueue_last_id"
