COPY "jobs" ("payload", "stage_tag") FROM STDIN WITH (ENCODING 'UTF8')
