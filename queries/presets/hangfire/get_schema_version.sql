-- purpose: Hangfire.PostgreSql's own schema version: the row its installer (PostgreSqlObjectsInstaller) keeps in the schema table of the job table's schema (19 for 1.19.12, 23 since 1.20.10)
SELECT max(v.version)::text FROM {schema}."schema" AS v
