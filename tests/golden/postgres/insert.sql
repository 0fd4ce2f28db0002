COPY "jobs" ("payload") FROM STDIN
