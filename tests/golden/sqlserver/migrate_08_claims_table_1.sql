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
