UPDATE "jobs" SET "stage_tag" = %s WHERE "ctid" = ANY(ARRAY(SELECT "ctid" FROM "jobs" WHERE "state" = 'failed' AND "stage_tag" IS NULL LIMIT %s FOR UPDATE SKIP LOCKED)) RETURNING "id"
