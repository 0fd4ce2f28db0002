CREATE TABLE IF NOT EXISTS "sqlqueue_sink_ledger" (
  "queue_name" VARCHAR(200) NOT NULL,
  "writer_id" VARCHAR(200) NOT NULL,
  "batch_id" BIGINT NOT NULL,
  "row_count" BIGINT NOT NULL,
  "committed_at" TIMESTAMP NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now')),
  CONSTRAINT "pk_sqlqueue_sink_ledger" PRIMARY KEY ("queue_name", "writer_id", "batch_id")
)
