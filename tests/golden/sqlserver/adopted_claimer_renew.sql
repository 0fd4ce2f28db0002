UPDATE [dbo].[jobs] WITH (ROWLOCK) SET [start_date] = SYSDATETIME() WHERE (([in_process] = ? AND [id] = ?) OR ([in_process] = ? AND [id] = ?))
