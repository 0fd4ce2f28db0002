DROP TABLE temp."sqlqueue_acks"
