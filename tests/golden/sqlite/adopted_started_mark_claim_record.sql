INSERT INTO "jobs_sqlqueue_claims" ("sqlqueue_consumer", "sqlqueue_claim_seq", "Id", "Payload", "ProcessingStartedAt", "Errors") VALUES (?, ?, ?, ?, ?, ?)
