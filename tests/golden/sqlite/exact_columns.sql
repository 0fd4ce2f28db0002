SELECT name, type FROM pragma_table_info(?) ORDER BY cid
