-- Least privilege for sqlqueue's connector login on SQL Server. Run as a DBA (sqlcmd -I), after
-- the queue exists (create it with `sqlqueue create --print` and review the DDL).
-- Replace: database [ops], queue [dbo].[orders] (and its [dbo].[orders_unpublished],
-- [dbo].[orders_staging], [dbo].[orders_layout] and [dbo].[orders_claims]), login [sqlqueue_connector].
-- The login itself comes from your secret store or Microsoft Entra ID, e.g.
--   CREATE LOGIN [sqlqueue_connector] FROM EXTERNAL PROVIDER;
-- It needs no server role, no db_owner, no DDL rights: tables, indexes and LOCK_ESCALATION are
-- the DBA's, set once by the create script.
USE [ops];
GO

CREATE USER [sqlqueue_connector] FOR LOGIN [sqlqueue_connector];
GO
CREATE ROLE [sqlqueue_queue_user];
GO
ALTER ROLE [sqlqueue_queue_user] ADD MEMBER [sqlqueue_connector];
GO

-- Source: claim (UPDATE ... OUTPUT), read (SELECT), complete (DELETE, or UPDATE to done).
-- Sink: write (INSERT), drop what an aborted batch wrote (DELETE), publish dedup-keyed batches
-- (INSERT ... SELECT). Acks: UPDATE and DELETE.
GRANT SELECT, INSERT, UPDATE, DELETE ON OBJECT::[dbo].[orders] TO [sqlqueue_queue_user];
GO
-- Sink batches not committed yet: claims and peeks skip their rows (SELECT); the sink lists a
-- batch (INSERT) and publishes or drops it (DELETE).
GRANT SELECT, INSERT, DELETE ON OBJECT::[dbo].[orders_unpublished] TO [sqlqueue_queue_user];
GO
-- The sink's staging table, for batches with dedup keys: stage (INSERT, DELETE an earlier attempt), publish (SELECT, DELETE), discard (DELETE).
GRANT SELECT, INSERT, DELETE ON OBJECT::[dbo].[orders_staging] TO [sqlqueue_queue_user];
GO
-- The sink's ledger: has a batch been published (SELECT), record it (INSERT), prune old entries (DELETE).
GRANT SELECT, INSERT, DELETE ON OBJECT::[dbo].[sqlqueue_sink_ledger] TO [sqlqueue_queue_user];
GO
-- The queue's layout: sources and sinks check it before they start (sqlqueue migrate, run by the DBA, writes it).
GRANT SELECT ON OBJECT::[dbo].[orders_layout] TO [sqlqueue_queue_user];
GO
-- Claims held as runs of ids: record (INSERT), read and lock (SELECT WITH (UPDLOCK)), renew (UPDATE),
-- forget once done or given back (DELETE). A claim's turn is an application lock (sp_getapplock), which
-- needs membership in public only.
GRANT SELECT, INSERT, UPDATE, DELETE ON OBJECT::[dbo].[orders_claims] TO [sqlqueue_queue_user];
GO
-- sqlqueue doctor reads index filters and trigger state: metadata that needs VIEW DEFINITION.
GRANT VIEW DEFINITION ON OBJECT::[dbo].[orders] TO [sqlqueue_queue_user];
GO
-- sqlqueue doctor asks for the claim's estimated plan (SET SHOWPLAN_XML ON): SHOWPLAN permission.
-- It runs nothing; a login without it gets a doctor error instead of that one finding.
GRANT SHOWPLAN TO [sqlqueue_queue_user];
GO
