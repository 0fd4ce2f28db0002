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
