-- purpose: the user tables that exist, to list when a configured table is missing
SELECT quote_ident(schemaname) || '.' || quote_ident(tablename)
FROM pg_tables
WHERE schemaname NOT IN ('pg_catalog', 'information_schema')
  AND left(schemaname, 8) <> 'pg_toast'
ORDER BY schemaname, tablename
