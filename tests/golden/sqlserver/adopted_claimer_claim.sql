WITH [batch] AS (
  SELECT TOP (?) * FROM [dbo].[jobs] WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK)
  WHERE ([app_server] IS NULL OR ([start_date] < DATEADD(SECOND, ?, SYSDATETIME()))) AND [end_date] IS NULL AND [attempts] < ? AND [scheduled_start_date] <= SYSDATETIME()
  ORDER BY [scheduled_start_date] ASC, [id] ASC
)
UPDATE [batch]
SET [start_date] = SYSDATETIME(), [attempts] = [attempts] + 1, [app_server] = ?
OUTPUT CAST(? AS NVARCHAR(400)), CAST(? AS BIGINT), inserted.[id], inserted.[reputation], inserted.[app_server], inserted.[attempts], inserted.[scheduled_start_date], inserted.[start_date], inserted.[end_date]
INTO [dbo].[jobs_sqlqueue_claims] ([sqlqueue_consumer], [sqlqueue_claim_seq], [id], [reputation], [app_server], [attempts], [scheduled_start_date], [start_date], [end_date])
