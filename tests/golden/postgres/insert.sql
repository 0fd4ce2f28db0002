COPY "jobs" ("payload", "state", "stage_tag") FROM STDIN
