SELECT COUNT(*) = 0 FROM pragma_table_info('jobs') WHERE name = 'customer_id'
