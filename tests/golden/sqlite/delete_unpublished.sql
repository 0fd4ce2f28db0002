DELETE FROM "jobs_unpublished" WHERE "stage_tag" = ?
