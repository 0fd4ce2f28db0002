SELECT pg_advisory_xact_lock(CAST(CAST('x' || substr(md5('sqlqueue.groups "jobs"'), 1, 16) AS bit(64)) AS bigint)), set_config('jit', 'off', true)
