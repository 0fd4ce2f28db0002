SELECT '"' || "table" || '"', '"' || "to" || '"' FROM pragma_foreign_key_list(?) WHERE "from" = ?
