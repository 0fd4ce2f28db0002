UPDATE "jobs" SET "start_date" = strftime('%Y-%m-%d %H:%M:%f', 'now', 'localtime') WHERE (("in_process" = ? AND "id" = ?) OR ("in_process" = ? AND "id" = ?))
