UPDATE [dbo].[jobs] WITH (ROWLOCK) SET [Status] = N'Failed', [UpdatedAt] = SYSDATETIME() WHERE [Status] = N'Processing' AND [StartedAt] < DATEADD(SECOND, ?, SYSDATETIME()) AND [AttemptNum] >= ?
