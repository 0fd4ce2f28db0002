SELECT MAX("batch_id") FROM "sqlqueue_sink_ledger" WHERE "queue_name" = %s AND "writer_id" = %s AND "batch_id" >= 0
