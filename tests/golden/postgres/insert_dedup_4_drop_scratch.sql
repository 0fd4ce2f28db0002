DROP TABLE sqlqueue_scratch
