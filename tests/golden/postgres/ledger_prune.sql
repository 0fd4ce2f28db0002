DELETE FROM "sqlqueue_sink_ledger" WHERE "queue_name" = %s AND "writer_id" = %s AND "batch_id" < %s
