SELECT TOP (?) [Id], [Payload], [ProcessingStartedAt], [Errors] FROM [dbo].[jobs] WITH (READPAST, READCOMMITTEDLOCK) WHERE [ProcessingStartedAt] IS NULL ORDER BY [Id] ASC
