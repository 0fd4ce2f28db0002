SELECT CASE WHEN EXISTS (SELECT 1 FROM sys.indexes WHERE name = N'ix_jobs_staged' AND object_id = OBJECT_ID(N'dbo.jobs')) THEN 1 ELSE 0 END
