UPDATE "jobs" SET "state" = 'ready', "attempts" = 0, "due_at" = now(), "consumer" = NULL, "claim_seq" = NULL, "completed_at" = NULL WHERE "state" = 'failed' AND "stage_tag" IS NULL AND "id" = %s
