SELECT COUNT(*) FROM [dbo].[jobs_sqlqueue_claims]
