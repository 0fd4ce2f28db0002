DISABLE TRIGGER [trg_jobs_audit] ON [dbo].[jobs]
