SELECT MAX("batch_id") FROM "sqlqueue_sink_ledger" WHERE "queue_name" = ? AND "writer_id" = ? AND "batch_id" >= 0
