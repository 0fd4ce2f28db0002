WITH [batch] AS (
  SELECT TOP (?) * FROM [dbo].[jobs] WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK)
  WHERE [in_process] IN ('0', '1') AND ([in_process] = '0' OR ([in_process] = '1' AND [end_date] IS NULL AND [start_date] < DATEADD(SECOND, ?, SYSDATETIME()) AND NOT EXISTS (SELECT 1 FROM [dbo].[jobs_sqlqueue_claims] WHERE [jobs_sqlqueue_claims].[sqlqueue_consumer] = ? AND [jobs_sqlqueue_claims].[in_process] = [jobs].[in_process] AND [jobs_sqlqueue_claims].[id] = [jobs].[id]))) AND [attempts] < ? AND [scheduled_start_date] <= SYSDATETIME()
  ORDER BY [id] ASC
)
UPDATE [batch]
SET [in_process] = '1', [end_date] = NULL, [start_date] = SYSDATETIME(), [attempts] = [attempts] + 1, [app_server] = ?
OUTPUT CAST(? AS NVARCHAR(400)), CAST(? AS BIGINT), inserted.[id], inserted.[in_process], inserted.[scheduled_start_date], inserted.[start_date], inserted.[end_date], inserted.[duration_milliseconds], inserted.[app_server], inserted.[attempts], inserted.[Payload]
INTO [dbo].[jobs_sqlqueue_claims] ([sqlqueue_consumer], [sqlqueue_claim_seq], [id], [in_process], [scheduled_start_date], [start_date], [end_date], [duration_milliseconds], [app_server], [attempts], [Payload])
