-- purpose: River's own schema version: the last migration of its main line in river_migration
SELECT max(m.version)::text FROM {schema}.river_migration AS m
