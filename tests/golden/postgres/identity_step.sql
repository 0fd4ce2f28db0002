SELECT seqincrement FROM pg_sequence WHERE seqrelid = pg_get_serial_sequence('"jobs"', 'id')::regclass
