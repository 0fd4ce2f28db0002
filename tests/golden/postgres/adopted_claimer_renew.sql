UPDATE "jobs" SET "start_date" = LOCALTIMESTAMP WHERE (("in_process" = %s AND "id" = %s) OR ("in_process" = %s AND "id" = %s))
