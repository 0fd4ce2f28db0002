INSERT INTO "jobs" ("payload", "dedup_key", "state", "stage_tag") SELECT "payload", "dedup_key", "state", "stage_tag" FROM sqlqueue_scratch WHERE true ON CONFLICT DO NOTHING
