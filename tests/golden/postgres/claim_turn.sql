SELECT pg_advisory_xact_lock(1397835600, CAST(CAST(CAST('"jobs"' AS regclass) AS oid) AS integer))
