IF OBJECT_ID(N'dbo.jobs_sqlqueue_claims', N'U') IS NULL
CREATE TABLE [dbo].[jobs_sqlqueue_claims] (
  [sqlqueue_row] BIGINT IDENTITY(1, 1) NOT NULL,
  [sqlqueue_consumer] NVARCHAR(400) NOT NULL,
  [sqlqueue_claim_seq] BIGINT NOT NULL,
  [Id] bigint NULL,
  [Payload] nvarchar(max) NULL,
  [ProcessingStartedAt] datetime2(7) NULL,
  CONSTRAINT [pk_jobs_sqlqueue_claims] PRIMARY KEY ([sqlqueue_consumer], [sqlqueue_claim_seq], [sqlqueue_row])
)
