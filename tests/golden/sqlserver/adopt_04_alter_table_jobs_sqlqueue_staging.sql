ALTER TABLE [dbo].[jobs_sqlqueue_staging] SET (LOCK_ESCALATION = DISABLE)
