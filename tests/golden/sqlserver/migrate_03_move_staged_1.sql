DELETE TOP (?) FROM [dbo].[jobs] WITH (ROWLOCK)
OUTPUT deleted.[stage_tag], deleted.[priority], deleted.[due_at], deleted.[dedup_key], deleted.[max_attempts], deleted.[payload]
INTO [dbo].[jobs_staging] ([stage_tag], [priority], [due_at], [dedup_key], [max_attempts], [payload])
WHERE [state] = 'staged'
