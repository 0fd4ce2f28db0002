CREATE TABLE IF NOT EXISTS "sqlqueue_sink_ledger" (
  "queue_name" varchar(400) NOT NULL,
  "writer_id" varchar(400) NOT NULL,
  "batch_id" bigint NOT NULL,
  "row_count" bigint NOT NULL,
  "committed_at" timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT "pk_sqlqueue_sink_ledger" PRIMARY KEY ("queue_name", "writer_id", "batch_id")
)
