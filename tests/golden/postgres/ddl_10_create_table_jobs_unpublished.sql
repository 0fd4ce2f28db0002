CREATE TABLE IF NOT EXISTS "jobs_unpublished" (
  "stage_tag" varchar(400) NOT NULL,
  "id_after" bigint NOT NULL,
  "id_upto" bigint NOT NULL,
  "row_count" bigint NOT NULL,
  CONSTRAINT "pk_jobs_unpublished" PRIMARY KEY ("stage_tag")
)
