IF NOT EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_claimed' AND object_id = OBJECT_ID(N'dbo.jobs'))
CREATE INDEX [ix_jobs_claimed] ON [dbo].[jobs] ([consumer], [claim_seq]) INCLUDE ([lease_until]) WHERE [state] = 'claimed'
