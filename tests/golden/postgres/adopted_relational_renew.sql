UPDATE "jobs" SET "StartedAt" = LOCALTIMESTAMP, "UpdatedAt" = LOCALTIMESTAMP WHERE "EnqueuedAt" IN (%s, %s)
