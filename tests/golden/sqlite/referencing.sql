SELECT NULL, m.name, f.id, f."from", f."to" FROM sqlite_master AS m, pragma_foreign_key_list(m.name) AS f WHERE m.type = 'table' AND f."table" = ? COLLATE NOCASE ORDER BY m.name, f.id, f.seq
