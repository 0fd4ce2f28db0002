IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ux_jobs_claims_first' AND object_id = OBJECT_ID(N'dbo.jobs_claims'))
CREATE UNIQUE INDEX [ux_jobs_claims_first] ON [dbo].[jobs_claims] ([sqlqueue_first_id]) INCLUDE ([sqlqueue_last_id])
