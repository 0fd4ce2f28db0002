IF OBJECT_ID(N'dbo.sqlqueue_sink_ledger', N'U') IS NULL
CREATE TABLE [dbo].[sqlqueue_sink_ledger] (
  [queue_name] NVARCHAR(400) NOT NULL,
  [writer_id] NVARCHAR(400) NOT NULL,
  [batch_id] BIGINT NOT NULL,
  [row_count] BIGINT NOT NULL,
  [committed_at] DATETIME2(6) NOT NULL DEFAULT SYSUTCDATETIME(),
  CONSTRAINT [pk_sqlqueue_sink_ledger] PRIMARY KEY ([queue_name], [writer_id], [batch_id])
)
