SELECT MAX("layout") FROM "jobs_layout"
