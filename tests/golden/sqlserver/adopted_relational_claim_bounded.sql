WITH [batch] AS (
  SELECT TOP (?) * FROM [dbo].[jobs] WITH (UPDLOCK, READPAST, ROWLOCK, READCOMMITTEDLOCK)
  WHERE [Status] IN ('Pending', 'Error', 'Processing') AND ([Status] IN ('Pending', 'Error') OR ([Status] = 'Processing' AND [StartedAt] < DATEADD(SECOND, ?, SYSDATETIME()) AND NOT EXISTS (SELECT 1 FROM [dbo].[jobs_sqlqueue_claims] WHERE [jobs_sqlqueue_claims].[sqlqueue_consumer] = ? AND [jobs_sqlqueue_claims].[EnqueuedAt] = [jobs].[EnqueuedAt]))) AND [AttemptNum] < ? AND [ScheduledFor] <= SYSDATETIME() AND [EnqueuedAt] <= ?
  ORDER BY [ScheduledFor] ASC, [EnqueuedAt] ASC
)
UPDATE [batch]
SET [Status] = 'Processing', [StartedAt] = SYSDATETIME(), [AttemptNum] = [AttemptNum] + 1, [UpdatedAt] = SYSDATETIME()
OUTPUT CAST(? AS NVARCHAR(400)), CAST(? AS BIGINT), inserted.[EnqueuedAt], inserted.[UpdatedAt], inserted.[Status], inserted.[Type], inserted.[Step], inserted.[AttemptNum], inserted.[Response], inserted.[Error], inserted.[StartedAt], inserted.[Duration], inserted.[ScheduledFor], inserted.[Payload]
INTO [dbo].[jobs_sqlqueue_claims] ([sqlqueue_consumer], [sqlqueue_claim_seq], [EnqueuedAt], [UpdatedAt], [Status], [Type], [Step], [AttemptNum], [Response], [Error], [StartedAt], [Duration], [ScheduledFor], [Payload])
