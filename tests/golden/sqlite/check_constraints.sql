SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?
