ALTER TABLE "jobs" ADD COLUMN "customer_id" BIGINT
