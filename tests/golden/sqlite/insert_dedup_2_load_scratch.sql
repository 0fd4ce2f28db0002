INSERT INTO sqlqueue_scratch ("payload", "dedup_key") VALUES (?, ?)
