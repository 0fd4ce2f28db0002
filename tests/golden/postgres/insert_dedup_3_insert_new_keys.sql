INSERT INTO "jobs" ("payload", "dedup_key") SELECT "payload", "dedup_key" FROM sqlqueue_scratch WHERE 1 = 1 ON CONFLICT DO NOTHING
