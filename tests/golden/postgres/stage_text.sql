COPY "jobs_staging" ("payload", "stage_tag") FROM STDIN WITH (ENCODING 'UTF8')
