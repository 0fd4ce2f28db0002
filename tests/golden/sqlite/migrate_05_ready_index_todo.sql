SELECT COUNT(*) = 0 FROM pragma_index_info('ix_jobs_ready') WHERE name = 'stage_tag'
