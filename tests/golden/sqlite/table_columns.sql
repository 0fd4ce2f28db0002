SELECT name, type, "notnull" = 0 FROM pragma_table_info(?)
