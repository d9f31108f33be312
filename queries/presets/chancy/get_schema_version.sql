-- purpose: chancy's own schema version: its migrator's row in chancy_schema_version
SELECT v.version::text FROM {schema}.chancy_schema_version AS v WHERE v.version_of = 'chancy'
