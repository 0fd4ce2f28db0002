COPY "jobs" ("payload", "stage_tag") FROM STDIN
