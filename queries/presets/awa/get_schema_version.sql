-- purpose: awa's schema version, as its own migrations table keeps it (awa.schema_version: 40 for awa 0.6.5 to 0.6.9, 11 for 0.5.7), with the storage engine awa itself reads as active (awa.active_storage_engine(), since its migration 10): "40, canonical engine"
SELECT max(v.version)::text || ', ' || {schema}.active_storage_engine() || ' engine'
FROM {schema}.schema_version AS v
