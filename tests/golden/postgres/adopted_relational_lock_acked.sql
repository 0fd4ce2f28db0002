SELECT 1 FROM "jobs" WHERE "EnqueuedAt" = %s FOR UPDATE
