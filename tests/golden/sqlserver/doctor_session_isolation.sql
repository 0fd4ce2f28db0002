SELECT transaction_isolation_level FROM sys.dm_exec_sessions WHERE session_id = @@SPID
