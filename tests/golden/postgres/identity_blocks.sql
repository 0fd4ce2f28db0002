SELECT nextval(pg_get_serial_sequence('"jobs"', 'id')) FROM generate_series(1, %s)
