SELECT MAX([layout]) FROM [dbo].[jobs_layout]
