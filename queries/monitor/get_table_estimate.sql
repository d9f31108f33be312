-- purpose: the planner's row estimate of the queue table (-1 when never analyzed); reads the catalog only
SELECT c.reltuples::bigint AS reltuples
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s AND c.relname = %(table)s
