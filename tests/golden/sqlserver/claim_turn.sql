DECLARE @resource NVARCHAR(255) = CONCAT('sqlqueue.groups ', OBJECT_ID('[dbo].[jobs]')), @granted INT;
EXEC @granted = sp_getapplock @Resource = @resource, @LockMode = 'Exclusive', @LockOwner = 'Transaction';
IF @granted < 0 THROW 51000, 'sqlqueue: the turn of a claim was not granted', 1;
