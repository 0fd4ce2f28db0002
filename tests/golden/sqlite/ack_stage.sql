CREATE TEMP TABLE "sqlqueue_acks" ("n" BIGINT, "k0" BIGINT, "outcome" VARCHAR(200), "attempts" INT, "error" TEXT, "delay_seconds" BIGINT, PRIMARY KEY ("sqlqueue_k0"))
