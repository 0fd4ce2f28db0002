SELECT seqincrement, has_sequence_privilege(pg_get_serial_sequence('"jobs"', 'id')::regclass, 'USAGE') FROM pg_sequence WHERE seqrelid = pg_get_serial_sequence('"jobs"', 'id')::regclass
