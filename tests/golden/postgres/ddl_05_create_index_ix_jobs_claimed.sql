CREATE INDEX IF NOT EXISTS "ix_jobs_claimed" ON "jobs" ("consumer", "claim_seq") INCLUDE ("lease_until") WHERE "state" = 'claimed'
