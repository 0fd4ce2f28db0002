SELECT "stage_tag", "id_after", "id_upto", "row_count" FROM "jobs_unpublished" WHERE "stage_tag" >= ? AND "stage_tag" <= ?
