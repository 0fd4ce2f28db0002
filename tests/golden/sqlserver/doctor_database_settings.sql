SELECT d.is_read_committed_snapshot_on, t.lock_escalation_desc, d.compatibility_level FROM sys.databases AS d CROSS JOIN sys.tables AS t WHERE d.database_id = DB_ID() AND t.object_id = OBJECT_ID(?)
