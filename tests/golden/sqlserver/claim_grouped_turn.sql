DECLARE @granted INT;
EXEC @granted = sp_getapplock @Resource = 'sqlqueue.groups [dbo].[jobs]', @LockMode = 'Exclusive', @LockOwner = 'Transaction';
IF @granted < 0 THROW 51000, 'sqlqueue: the turn of a grouped claim was not granted', 1;
