UPDATE "jobs" SET "stage_tag" = %s WHERE "id" = ANY(ARRAY(SELECT "id" FROM "jobs" WHERE "state" = 'failed' AND "stage_tag" IS NULL LIMIT %s FOR UPDATE SKIP LOCKED)) RETURNING "id"
