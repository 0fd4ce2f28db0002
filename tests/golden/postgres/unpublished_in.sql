SELECT "stage_tag", "id_after", "id_upto", "row_count" FROM "jobs_unpublished" WHERE "stage_tag" >= %s AND "stage_tag" <= %s
