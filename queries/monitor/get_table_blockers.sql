-- purpose: who holds, or queues for, a lock on the queue table that an ordinary read must wait behind (ACCESS EXCLUSIVE: ALTER TABLE, LOCK TABLE, VACUUM FULL), to name them when a read times out
SELECT l.pid, coalesce(a.application_name, '') AS application_name, l.mode, l.granted
FROM pg_locks AS l
JOIN pg_class AS c ON c.oid = l.relation
JOIN pg_namespace AS n ON n.oid = c.relnamespace
LEFT JOIN pg_stat_activity AS a ON a.pid = l.pid
WHERE n.nspname = %(schema)s AND c.relname = %(table)s
  AND l.mode = 'AccessExclusiveLock'
  AND l.pid <> pg_backend_pid()
ORDER BY l.granted DESC, l.pid
