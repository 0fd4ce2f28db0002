IF NOT EXISTS (SELECT 1 FROM sys.columns WHERE object_id = OBJECT_ID(N'dbo.jobs') AND name = N'customer_id')
ALTER TABLE [dbo].[jobs] ADD [customer_id] BIGINT
