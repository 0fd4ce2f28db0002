DROP TABLE pg_temp."sqlqueue_acks"
