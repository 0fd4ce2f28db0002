CREATE TEMP TABLE "sqlqueue_acks" ("n" bigint, "k0" bigint, "outcome" varchar(400), "attempts" integer, "error" text, "delay_seconds" bigint, PRIMARY KEY ("sqlqueue_k0"))
