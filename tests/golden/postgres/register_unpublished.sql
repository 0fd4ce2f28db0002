INSERT INTO "jobs_unpublished" ("stage_tag", "id_after", "id_upto", "row_count") VALUES (%s, %s, %s, %s)
