-- purpose: pg-boss's own schema version (its version table, one row; 24 for pg-boss 10, 26 for 11 and early 12, 46 for 12.38)
SELECT max(v.version)::text FROM {schema}.version AS v
