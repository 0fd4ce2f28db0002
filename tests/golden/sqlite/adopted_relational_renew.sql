UPDATE "jobs" SET "StartedAt" = strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime'), "UpdatedAt" = strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime') WHERE "EnqueuedAt" IN (?, ?)
