INSERT INTO [dbo].[sqlqueue_sink_ledger] ([queue_name], [writer_id], [batch_id], [row_count]) VALUES (?, ?, ?, ?)
