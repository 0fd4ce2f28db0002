UPDATE [dbo].[jobs] WITH (ROWLOCK) SET [StartedAt] = SYSDATETIME(), [UpdatedAt] = SYSDATETIME() WHERE [EnqueuedAt] IN (?, ?)
