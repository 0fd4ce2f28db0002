SELECT NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('"jobs"') AND attname = 'customer_id' AND NOT attisdropped)
