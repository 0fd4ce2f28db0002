UPDATE "jobs" SET "state" = 'ready', "stage_tag" = NULL WHERE "state" = 'staged' AND "stage_tag" = ?
