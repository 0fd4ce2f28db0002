ALTER TABLE "jobs" ADD COLUMN IF NOT EXISTS "customer_id" bigint
