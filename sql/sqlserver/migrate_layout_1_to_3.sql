-- Generated from sqlqueue's sqlserver dialect (sqlqueue migrate --print); do not edit by hand.
-- Regenerate: SQLQUEUE_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/unit/test_ddl_scripts.py
-- sqlqueue migrate: queue dbo.jobs from layout 1 to layout 3 (sqlserver; domain columns payload, ready index for fifo claims).
-- Stop every job of the earlier sqlqueue first. Each step checks the catalog before it changes
-- anything, so the script can run again after an interruption; the layout is recorded last.
-- Run with sqlcmd -I -b: filtered indexes need QUOTED_IDENTIFIER ON, and -b stops at the first
-- error. Consider SET LOCK_TIMEOUT 10000 first: DDL waiting for a lock holds up the claims behind it.

-- Step 1/9: add the stage_tag column where missing
IF NOT EXISTS (SELECT 1 FROM sys.columns WHERE object_id = OBJECT_ID(N'dbo.jobs') AND name = N'stage_tag')
ALTER TABLE [dbo].[jobs] ADD [stage_tag] NVARCHAR(400)
GO

-- Step 2/9: create jobs_staging, jobs_unpublished, sqlqueue_sink_ledger, jobs_layout where missing
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

IF OBJECT_ID(N'dbo.jobs_layout', N'U') IS NULL
CREATE TABLE [dbo].[jobs_layout] (
  [layout] INT NOT NULL,
  [recorded_at] DATETIME2(6) NOT NULL DEFAULT SYSUTCDATETIME(),
  CONSTRAINT [pk_jobs_layout] PRIMARY KEY ([layout])
)
GO

-- Step 3/9: move rows of uncommitted sink batches (state 'staged') into jobs_staging
IF EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_staged' AND object_id = OBJECT_ID(N'dbo.jobs'))
WHILE 1 = 1
BEGIN
  DELETE TOP (4000) FROM [dbo].[jobs] WITH (ROWLOCK)
  OUTPUT deleted.[stage_tag], deleted.[priority], deleted.[due_at], deleted.[dedup_key], deleted.[max_attempts], deleted.[payload]
  INTO [dbo].[jobs_staging] ([stage_tag], [priority], [due_at], [dedup_key], [max_attempts], [payload])
  WHERE [state] = 'staged'
  IF @@ROWCOUNT < 4000 BREAK
END
GO

-- Step 4/9: drop ix_jobs_staged once no row is staged
IF EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_staged' AND object_id = OBJECT_ID(N'dbo.jobs'))
IF NOT EXISTS (SELECT 1 FROM [dbo].[jobs] WITH (READCOMMITTEDLOCK) WHERE [state] = 'staged')
DROP INDEX [ix_jobs_staged] ON [dbo].[jobs]
GO

-- Step 5/9: replace ck_jobs_state by one without 'staged'
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_staged' AND object_id = OBJECT_ID(N'dbo.jobs'))
IF NOT EXISTS (SELECT 1 FROM sys.check_constraints WHERE parent_object_id = OBJECT_ID(N'dbo.jobs') AND name = N'ck_jobs_state' AND CHARINDEX(N'staged', [definition]) = 0)
BEGIN
  IF EXISTS (SELECT 1 FROM sys.check_constraints WHERE parent_object_id = OBJECT_ID(N'dbo.jobs') AND name = N'ck_jobs_state')
    ALTER TABLE [dbo].[jobs] DROP CONSTRAINT [ck_jobs_state]
  ALTER TABLE [dbo].[jobs] WITH NOCHECK ADD CONSTRAINT [ck_jobs_state] CHECK ([state] IN ('ready', 'claimed', 'done', 'failed'))
END
GO

-- Step 6/9: rebuild ix_jobs_ready to cover stage_tag (online where the edition allows)
IF EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_ready' AND object_id = OBJECT_ID(N'dbo.jobs'))
IF NOT EXISTS (SELECT 1 FROM sys.indexes AS i JOIN sys.index_columns AS ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id WHERE i.object_id = OBJECT_ID(N'dbo.jobs') AND i.name = N'ix_jobs_ready' AND c.name = N'stage_tag')
BEGIN
  IF CAST(SERVERPROPERTY('EngineEdition') AS INT) IN (3, 5, 8)
    CREATE INDEX [ix_jobs_ready] ON [dbo].[jobs] ([id] ASC) INCLUDE ([due_at], [priority], [stage_tag]) WHERE [state] = 'ready' WITH (DROP_EXISTING = ON, ONLINE = ON)
  ELSE
    CREATE INDEX [ix_jobs_ready] ON [dbo].[jobs] ([id] ASC) INCLUDE ([due_at], [priority], [stage_tag]) WHERE [state] = 'ready' WITH (DROP_EXISTING = ON)
END
GO

IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_ready' AND object_id = OBJECT_ID(N'dbo.jobs'))
CREATE INDEX [ix_jobs_ready] ON [dbo].[jobs] ([id] ASC) INCLUDE ([due_at], [priority], [stage_tag]) WHERE [state] = 'ready'
GO

-- Step 7/9: create ix_jobs_tag (online where the edition allows)
IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_tag' AND object_id = OBJECT_ID(N'dbo.jobs'))
BEGIN
  IF CAST(SERVERPROPERTY('EngineEdition') AS INT) IN (3, 5, 8)
    CREATE INDEX [ix_jobs_tag] ON [dbo].[jobs] ([stage_tag]) WHERE [stage_tag] IS NOT NULL WITH (ONLINE = ON)
  ELSE
    CREATE INDEX [ix_jobs_tag] ON [dbo].[jobs] ([stage_tag]) WHERE [stage_tag] IS NOT NULL
END
GO

-- Step 8/9: create jobs_claims, where claims hold runs of ids, where missing
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

-- Step 9/9: record layout 3 in jobs_layout
INSERT INTO [dbo].[jobs_layout] ([layout]) SELECT 3 WHERE NOT EXISTS (SELECT 1 FROM [dbo].[jobs_layout] WHERE [layout] = 3) AND EXISTS (SELECT 1 FROM sys.check_constraints WHERE parent_object_id = OBJECT_ID(N'dbo.jobs') AND name = N'ck_jobs_state' AND CHARINDEX(N'staged', [definition]) = 0)
GO

