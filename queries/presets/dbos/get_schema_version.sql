-- purpose: DBOS's own schema version: the last migration of its system schema in dbos_migrations
SELECT max(m.version)::text FROM {schema}.dbos_migrations AS m
