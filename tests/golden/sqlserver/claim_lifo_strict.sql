WITH [batch] AS (
  SELECT TOP (?) * FROM [dbo].[jobs] WITH (UPDLOCK, ROWLOCK, INDEX([ix_jobs_ready]))
  WHERE [state] = 'ready' AND [due_at] <= SYSUTCDATETIME() AND ([jobs].[stage_tag] IS NULL OR NOT EXISTS (SELECT 1 FROM [dbo].[jobs_unpublished] WITH (READCOMMITTEDLOCK) WHERE [jobs_unpublished].[stage_tag] = [jobs].[stage_tag])) AND NOT EXISTS (SELECT 1 FROM [dbo].[jobs_claims] WITH (READCOMMITTEDLOCK) WHERE [jobs_claims].[sqlqueue_first_id] <= [jobs].[id] AND [jobs_claims].[sqlqueue_last_id] >= [jobs].[id])
  ORDER BY [id] DESC
)
UPDATE [batch]
SET [state] = 'claimed', [completed_at] = NULL, [claimed_at] = SYSUTCDATETIME(), [attempts] = [attempts] + 1, [consumer] = ?, [claim_seq] = ?, [lease_until] = DATEADD(SECOND, ?, SYSUTCDATETIME()), [stage_tag] = NULL
OUTPUT inserted.[id], DATEDIFF_BIG(MILLISECOND, inserted.[enqueued_at], inserted.[claimed_at])
