WITH "claimed" AS (
  UPDATE "jobs" SET "start_date" = LOCALTIMESTAMP, "attempts" = "attempts" + 1, "app_server" = %s WHERE "id" = ANY(ARRAY(SELECT "id" FROM "jobs" WHERE ("app_server" IS NULL OR ("start_date" < LOCALTIMESTAMP + %s * INTERVAL '1 second')) AND "end_date" IS NULL AND "attempts" < %s AND "scheduled_start_date" <= LOCALTIMESTAMP ORDER BY "scheduled_start_date" ASC, "id" ASC LIMIT %s FOR UPDATE SKIP LOCKED)) RETURNING "id", "reputation", "app_server", "attempts", "scheduled_start_date", "start_date", "end_date"
)
INSERT INTO "jobs_sqlqueue_claims" ("sqlqueue_consumer", "sqlqueue_claim_seq", "id", "reputation", "app_server", "attempts", "scheduled_start_date", "start_date", "end_date")
SELECT CAST(%s AS varchar(400)), CAST(%s AS bigint), "id", "reputation", "app_server", "attempts", "scheduled_start_date", "start_date", "end_date" FROM "claimed"
