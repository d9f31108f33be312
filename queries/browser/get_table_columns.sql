-- purpose: the columns of a table (the dead-letter table the browser reads), in table order
SELECT a.attname AS name
FROM pg_attribute AS a
JOIN pg_class AS c ON c.oid = a.attrelid
JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s AND c.relname = %(table)s
  AND a.attnum > 0
  AND NOT a.attisdropped
ORDER BY a.attnum
