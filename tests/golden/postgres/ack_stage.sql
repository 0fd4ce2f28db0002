CREATE TEMP TABLE "sqlqueue_acks" ("ack_n" bigint, "ack_k0" bigint, "ack_outcome" varchar(400), "ack_attempts" integer, "ack_error" text, "ack_delay_seconds" bigint, PRIMARY KEY ("ack_k0"))
