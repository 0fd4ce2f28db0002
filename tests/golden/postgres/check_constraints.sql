SELECT pg_get_constraintdef(c.oid) FROM pg_constraint AS c WHERE c.contype = 'c' AND c.conrelid = to_regclass(quote_ident(COALESCE(%s, current_schema())) || '.' || quote_ident(%s))
