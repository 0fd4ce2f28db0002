WITH "claimed" AS (
  UPDATE "jobs" SET "ProcessingStartedAt" = now() WHERE "ctid" = ANY(ARRAY(SELECT "ctid" FROM "jobs" WHERE "ProcessingStartedAt" IS NULL LIMIT %s FOR UPDATE SKIP LOCKED)) RETURNING "Id", "Payload", "ProcessingStartedAt", "Errors"
)
INSERT INTO "jobs_sqlqueue_claims" ("sqlqueue_consumer", "sqlqueue_claim_seq", "Id", "Payload", "ProcessingStartedAt", "Errors")
SELECT CAST(%s AS varchar(400)), CAST(%s AS bigint), "Id", "Payload", "ProcessingStartedAt", "Errors" FROM "claimed"
RETURNING "sqlqueue_row"
