COPY sqlqueue_scratch ("payload", "dedup_key") FROM STDIN
