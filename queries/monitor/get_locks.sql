-- purpose: live locks with their sessions and resolved relation names (those on the queue table or its partitions marked), excluding this session and bare virtualxid locks
WITH queue AS (  -- the queue table, and its partitions where it has some
    SELECT c.oid
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = %(schema)s AND c.relname = %(table)s
    UNION
    SELECT p.relid::oid
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    CROSS JOIN LATERAL pg_partition_tree(c.oid) AS p
    WHERE n.nspname = %(schema)s AND c.relname = %(table)s
)
SELECT l.pid,
       a.backend_start,
       coalesce(a.application_name, '') AS application_name,
       l.locktype,
       l.mode,
       l.granted,
       CASE WHEN l.relation IS NOT NULL THEN l.relation::regclass::text END AS relation,
       coalesce(l.relation IN (SELECT oid FROM queue), false) AS on_queue_table,
       extract(epoch FROM now() - l.waitstart)::float8 AS wait_s,
       a.state,
       coalesce(a.query, '') AS query,
       l.page,
       l.tuple::int AS tuple_index,
       CASE WHEN l.locktype = 'advisory' AND l.objsubid = 1
            THEN (l.classid::bigint << 32) | l.objid::bigint END AS advisory_key
FROM pg_locks AS l
LEFT JOIN pg_stat_activity AS a ON a.pid = l.pid
WHERE l.pid IS DISTINCT FROM pg_backend_pid()
  AND (l.database IS NULL OR l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
  AND NOT (l.locktype = 'virtualxid' AND l.granted)
ORDER BY l.granted, wait_s DESC NULLS LAST, on_queue_table DESC, l.pid
LIMIT %(limit)s
