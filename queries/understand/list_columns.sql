-- purpose: every column of every user table the role may read, from the catalog alone (no table is read, none is locked: nothing here opens a relation): its type and type category, NOT NULL and an enum's labels in declared order, with the table's size estimate; an oid list narrows it to some tables (NULL: all)
SELECT n.nspname AS schema,
       c.relname AS name,
       c.oid::bigint AS oid,
       c.reltuples::float8 AS rows_estimate,
       a.attname AS column_name,
       format_type(a.atttypid, a.atttypmod) AS type,
       ty.typcategory::text AS category,
       a.attnotnull AS not_null,
       CASE WHEN ty.typtype = 'e'
            THEN (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder)
                  FROM pg_enum AS e WHERE e.enumtypid = ty.oid) END AS enum_labels
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_type AS ty ON ty.oid = a.atttypid
WHERE c.relkind IN ('r', 'p')
  AND NOT c.relispartition
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND left(n.nspname, 8) <> 'pg_toast'
  AND (%(oids)s::oid[] IS NULL OR c.oid = ANY (%(oids)s::oid[]))
  AND has_table_privilege(c.oid, 'SELECT')
ORDER BY n.nspname, c.relname, a.attnum
