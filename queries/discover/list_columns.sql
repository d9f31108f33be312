-- purpose: every column of every user table (catalog only: no table is read), with its type, an enum's labels, the planner's common values and the table's size estimate, for discovery
SELECT n.nspname AS schema,
       c.relname AS name,
       c.oid::bigint AS oid,
       c.reltuples::float8 AS rows_estimate,
       a.attname AS column_name,
       format_type(a.atttypid, a.atttypmod) AS type,
       (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder)
        FROM pg_enum AS e WHERE e.enumtypid = a.atttypid) AS enum_labels,
       (SELECT s.most_common_vals::text::text[]
        FROM pg_stats AS s
        WHERE s.schemaname = n.nspname AND s.tablename = c.relname AND s.attname = a.attname
        LIMIT 1) AS common_values
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.relkind IN ('r', 'p')
  AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND left(n.nspname, 8) <> 'pg_toast'
  AND has_table_privilege(c.oid, 'SELECT')
ORDER BY n.nspname, c.relname, a.attnum
