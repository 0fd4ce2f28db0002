SELECT "stage_tag", MIN("id"), MAX("id"), COUNT(*) FROM "jobs" WHERE "state" = 'failed' AND "stage_tag" >= %s AND "stage_tag" <= %s GROUP BY "stage_tag" ORDER BY "stage_tag"
