-- purpose: whether the monitoring role has USAGE on a table's schema and SELECT on the table, before a poll reads the queue's dead-letter, workers or history table
SELECT has_schema_privilege(n.oid, 'USAGE') AS schema_usage,
       has_table_privilege(c.oid, 'SELECT') AS table_select
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = coalesce(%(schema)s, current_schema()) AND c.relname = %(table)s
