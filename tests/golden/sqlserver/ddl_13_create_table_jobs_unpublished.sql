IF OBJECT_ID(N'dbo.jobs_unpublished', N'U') IS NULL
CREATE TABLE [dbo].[jobs_unpublished] (
  [stage_tag] NVARCHAR(400) NOT NULL,
  [id_after] BIGINT NOT NULL,
  [id_upto] BIGINT NOT NULL,
  [row_count] BIGINT NOT NULL,
  CONSTRAINT [pk_jobs_unpublished] PRIMARY KEY ([stage_tag])
)
