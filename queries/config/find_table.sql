-- purpose: resolve a table name (optionally schema-qualified) through the search path
SELECT n.nspname, c.relname, c.oid::bigint
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = %(name)s
  AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND CASE WHEN %(schema)s::text IS NULL
           THEN n.nspname = ANY (current_schemas(false))
           ELSE n.nspname = %(schema)s::text END
ORDER BY array_position(current_schemas(false), n.nspname::text) NULLS LAST
LIMIT 1
