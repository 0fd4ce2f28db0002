UPDATE "jobs" SET "Status" = 'Failed', "UpdatedAt" = LOCALTIMESTAMP WHERE "Status" = 'Processing' AND "StartedAt" < LOCALTIMESTAMP + %s * INTERVAL '1 second' AND "AttemptNum" >= %s
