WITH "claimed" AS (
  DELETE FROM "jobs" WHERE "Id" = ANY(ARRAY(SELECT "Id" FROM "jobs" WHERE 1 = 1 LIMIT %s FOR UPDATE SKIP LOCKED)) RETURNING "Id", "Payload"
)
INSERT INTO "jobs_sqlqueue_claims" ("sqlqueue_consumer", "sqlqueue_claim_seq", "Id", "Payload")
SELECT CAST(%s AS varchar(400)), CAST(%s AS bigint), "Id", "Payload" FROM "claimed"
RETURNING "sqlqueue_row"
