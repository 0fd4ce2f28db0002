COPY sqlqueue_scratch ("payload", "dedup_key", "state", "stage_tag") FROM STDIN
