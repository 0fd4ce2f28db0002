-- Generated from sqlqueue's sqlserver dialect (Dialect.create_statements); do not edit by hand.
-- Example queue dbo.jobs: lifecycle columns, domain column 'payload text', fifo claim order; plus the sink ledger.
-- Re-runnable (idempotent): each statement creates only what is missing. The layout is recorded
-- only when this creates the queue table: one an earlier sqlqueue made needs `sqlqueue migrate`.
-- Regenerate: SQLQUEUE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_ddl_scripts.py
-- Run with sqlcmd -I: the filtered indexes need SET QUOTED_IDENTIFIER ON.

IF OBJECT_ID(N'dbo.jobs_layout', N'U') IS NULL
CREATE TABLE [dbo].[jobs_layout] (
  [layout] INT NOT NULL,
  [recorded_at] DATETIME2(6) NOT NULL DEFAULT SYSUTCDATETIME(),
  CONSTRAINT [pk_jobs_layout] PRIMARY KEY ([layout])
)
GO

INSERT INTO [dbo].[jobs_layout] ([layout]) SELECT 3 WHERE NOT EXISTS (SELECT 1 FROM [dbo].[jobs_layout] WHERE [layout] = 3) AND OBJECT_ID(N'dbo.jobs', N'U') IS NULL
GO

IF OBJECT_ID(N'dbo.jobs', N'U') IS NULL
CREATE TABLE [dbo].[jobs] (
  [id] BIGINT IDENTITY(1, 1) NOT NULL,
  [state] NVARCHAR(400) DEFAULT 'ready' NOT NULL,
  [priority] INT DEFAULT 0 NOT NULL,
  [enqueued_at] DATETIME2(6) DEFAULT SYSUTCDATETIME() NOT NULL,
  [due_at] DATETIME2(6) DEFAULT SYSUTCDATETIME() NOT NULL,
  [attempts] INT DEFAULT 0 NOT NULL,
  [max_attempts] INT,
  [consumer] NVARCHAR(400),
  [claim_seq] BIGINT,
  [claimed_at] DATETIME2(6),
  [lease_until] DATETIME2(6),
  [completed_at] DATETIME2(6),
  [last_error] NVARCHAR(MAX),
  [dedup_key] NVARCHAR(400),
  [stage_tag] NVARCHAR(400),
  [payload] NVARCHAR(MAX),
  CONSTRAINT [ck_jobs_state] CHECK ([state] IN ('ready', 'claimed', 'done', 'failed')),
  CONSTRAINT [pk_jobs] PRIMARY KEY ([id])
)
GO

ALTER TABLE [dbo].[jobs] SET (LOCK_ESCALATION = DISABLE)
GO

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_ready' AND object_id = OBJECT_ID(N'dbo.jobs'))
CREATE INDEX [ix_jobs_ready] ON [dbo].[jobs] ([id] ASC) INCLUDE ([due_at], [priority], [stage_tag]) WHERE [state] = 'ready'
GO

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_claimed' AND object_id = OBJECT_ID(N'dbo.jobs'))
CREATE INDEX [ix_jobs_claimed] ON [dbo].[jobs] ([consumer], [claim_seq]) INCLUDE ([lease_until]) WHERE [state] = 'claimed'
GO

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_done' AND object_id = OBJECT_ID(N'dbo.jobs'))
CREATE INDEX [ix_jobs_done] ON [dbo].[jobs] ([completed_at]) WHERE [state] = 'done'
GO

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ux_jobs_dedup' AND object_id = OBJECT_ID(N'dbo.jobs'))
CREATE UNIQUE INDEX [ux_jobs_dedup] ON [dbo].[jobs] ([dedup_key]) WHERE [dedup_key] IS NOT NULL
GO

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_tag' AND object_id = OBJECT_ID(N'dbo.jobs'))
CREATE INDEX [ix_jobs_tag] ON [dbo].[jobs] ([stage_tag]) WHERE [stage_tag] IS NOT NULL
GO

IF OBJECT_ID(N'dbo.jobs_staging', N'U') IS NULL
CREATE TABLE [dbo].[jobs_staging] (
  [stage_tag] NVARCHAR(400) NOT NULL,
  [priority] INT,
  [due_at] DATETIME2(6),
  [dedup_key] NVARCHAR(400),
  [max_attempts] INT,
  [payload] NVARCHAR(MAX)
)
GO

ALTER TABLE [dbo].[jobs_staging] SET (LOCK_ESCALATION = DISABLE)
GO

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_staging_tag' AND object_id = OBJECT_ID(N'dbo.jobs_staging'))
CREATE CLUSTERED INDEX [ix_jobs_staging_tag] ON [dbo].[jobs_staging] ([stage_tag])
GO

IF OBJECT_ID(N'dbo.jobs_unpublished', N'U') IS NULL
CREATE TABLE [dbo].[jobs_unpublished] (
  [stage_tag] NVARCHAR(400) NOT NULL,
  [id_after] BIGINT NOT NULL,
  [id_upto] BIGINT NOT NULL,
  [row_count] BIGINT NOT NULL,
  CONSTRAINT [pk_jobs_unpublished] PRIMARY KEY ([stage_tag])
)
GO

IF OBJECT_ID(N'dbo.sqlqueue_sink_ledger', N'U') IS NULL
CREATE TABLE [dbo].[sqlqueue_sink_ledger] (
  [queue_name] NVARCHAR(400) NOT NULL,
  [writer_id] NVARCHAR(400) NOT NULL,
  [batch_id] BIGINT NOT NULL,
  [row_count] BIGINT NOT NULL,
  [committed_at] DATETIME2(6) NOT NULL DEFAULT SYSUTCDATETIME(),
  CONSTRAINT [pk_sqlqueue_sink_ledger] PRIMARY KEY ([queue_name], [writer_id], [batch_id])
)
GO

IF OBJECT_ID(N'dbo.jobs_claims', N'U') IS NULL
CREATE TABLE [dbo].[jobs_claims] (
  [sqlqueue_consumer] NVARCHAR(400) NOT NULL,
  [sqlqueue_claim_seq] BIGINT NOT NULL,
  [sqlqueue_first_id] BIGINT NOT NULL,
  [sqlqueue_last_id] BIGINT NOT NULL,
  [sqlqueue_claimed_at] DATETIME2(6) DEFAULT SYSUTCDATETIME() NOT NULL,
  [sqlqueue_lease_until] DATETIME2(6) NOT NULL,
  CONSTRAINT [pk_jobs_claims] PRIMARY KEY ([sqlqueue_consumer], [sqlqueue_claim_seq], [sqlqueue_first_id])
)
GO

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ux_jobs_claims_first' AND object_id = OBJECT_ID(N'dbo.jobs_claims'))
CREATE UNIQUE INDEX [ux_jobs_claims_first] ON [dbo].[jobs_claims] ([sqlqueue_first_id]) INCLUDE ([sqlqueue_last_id])
GO
