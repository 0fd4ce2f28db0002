SELECT column_name, data_type, is_nullable = 'YES' FROM information_schema.columns WHERE table_schema = COALESCE(%s, current_schema()) AND table_name = %s ORDER BY ordinal_position
