-- Least privilege for sqlqueue's connector role on PostgreSQL. Run as the queue table's owner or
-- a superuser, after the queue exists (create it with `sqlqueue create --print` and review it).
-- Replace: database ops, schema public, queue public.orders (and its public.orders_unpublished,
-- public.orders_staging, public.orders_layout and public.orders_claims), role sqlqueue_connector.
-- Set the role's password interactively (psql: \password sqlqueue_connector) or use another
-- authentication method; never in a committed file.
CREATE ROLE sqlqueue_connector LOGIN;

GRANT CONNECT, TEMPORARY ON DATABASE ops TO sqlqueue_connector;  -- TEMPORARY: enqueue's dedup scratch table
GRANT USAGE ON SCHEMA public TO sqlqueue_connector;

-- Source: claim and complete (UPDATE, DELETE), read (SELECT). Sink: write (INSERT), drop what an
-- aborted batch wrote (DELETE), publish dedup-keyed batches (INSERT ... SELECT).
GRANT SELECT, INSERT, UPDATE, DELETE ON public.orders TO sqlqueue_connector;
-- The sink reserves blocks of ids from the identity's sequence (nextval, which needs USAGE; inserting with
-- the default does not) and names its rows' ids itself. Without it the sink lets the table number them.
GRANT USAGE ON SEQUENCE public.orders_id_seq TO sqlqueue_connector;
-- Sink batches not committed yet: claims and peeks skip their rows (SELECT); the sink lists a
-- batch (INSERT) and publishes or drops it (DELETE).
GRANT SELECT, INSERT, DELETE ON public.orders_unpublished TO sqlqueue_connector;
-- The sink's staging table, for batches with dedup keys: stage (INSERT, DELETE an earlier attempt), publish (SELECT, DELETE), discard (DELETE).
GRANT SELECT, INSERT, DELETE ON public.orders_staging TO sqlqueue_connector;
-- The sink's ledger: look up, record and prune published batches.
GRANT SELECT, INSERT, DELETE ON public.sqlqueue_sink_ledger TO sqlqueue_connector;
-- The queue's layout: sources and sinks check it before they start (sqlqueue migrate writes it, as its owner).
GRANT SELECT ON public.orders_layout TO sqlqueue_connector;
-- Claims held as runs of ids: record (INSERT), read and lock (SELECT ... FOR UPDATE, which needs UPDATE),
-- renew (UPDATE), forget once done or given back (DELETE).
GRANT SELECT, INSERT, UPDATE, DELETE ON public.orders_claims TO sqlqueue_connector;

-- sqlqueue doctor reads pg_index and pg_stat_user_tables, which every role may read. The fixes it
-- prints (CREATE INDEX, VACUUM, ALTER TABLE ... SET autovacuum_*) are for the table's owner.
