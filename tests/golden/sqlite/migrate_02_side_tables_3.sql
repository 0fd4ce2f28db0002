CREATE TABLE IF NOT EXISTS "jobs_unpublished" (
  "stage_tag" VARCHAR(200) NOT NULL,
  "id_after" BIGINT NOT NULL,
  "id_upto" BIGINT NOT NULL,
  "row_count" BIGINT NOT NULL,
  CONSTRAINT "pk_jobs_unpublished" PRIMARY KEY ("stage_tag")
)
