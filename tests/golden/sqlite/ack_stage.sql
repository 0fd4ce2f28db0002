CREATE TEMP TABLE "sqlqueue_acks" ("ack_n" BIGINT, "ack_k0" BIGINT, "ack_outcome" VARCHAR(200), "ack_attempts" INT, "ack_error" TEXT, "ack_delay_seconds" BIGINT, PRIMARY KEY ("ack_k0"))
