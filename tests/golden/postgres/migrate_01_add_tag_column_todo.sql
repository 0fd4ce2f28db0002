SELECT NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass('"jobs"') AND attname = 'stage_tag' AND NOT attisdropped)
