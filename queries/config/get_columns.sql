-- purpose: the columns of a table and their SQL types, in table order
SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
FROM pg_attribute a
WHERE a.attrelid = %(oid)s::oid
  AND a.attnum > 0
  AND NOT a.attisdropped
ORDER BY a.attnum
