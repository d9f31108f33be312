-- purpose: the columns of a table an INSERT may name (not generated), with their types, in table order
SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
FROM pg_attribute AS a
JOIN pg_class AS c ON c.oid = a.attrelid
JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s AND c.relname = %(table)s
  AND a.attnum > 0
  AND NOT a.attisdropped
  AND a.attgenerated = ''
ORDER BY a.attnum
