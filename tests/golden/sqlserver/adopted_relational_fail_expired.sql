UPDATE [dbo].[jobs] WITH (ROWLOCK) SET [Status] = 'Failed', [UpdatedAt] = SYSDATETIME() WHERE [Status] = 'Processing' AND [StartedAt] < DATEADD(SECOND, ?, SYSDATETIME()) AND [AttemptNum] >= ?
