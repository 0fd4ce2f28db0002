ALTER TABLE "jobs" ADD COLUMN IF NOT EXISTS "stage_tag" varchar(400)
