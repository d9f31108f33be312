-- purpose: sessions waiting on a lock and the pids that block them (pg_blocking_pids only for lock waiters)
SELECT a.pid,
       a.backend_start,
       coalesce(a.application_name, '') AS application_name,
       pg_blocking_pids(a.pid) AS blocked_by,
       extract(epoch FROM now() - coalesce(w.waitstart, a.state_change))::float8 AS wait_s,
       coalesce(a.wait_event_type || ':' || a.wait_event, '') AS wait_event,
       coalesce(a.query, '') AS query
FROM pg_stat_activity AS a
LEFT JOIN LATERAL (
    SELECT min(l.waitstart) AS waitstart FROM pg_locks AS l WHERE l.pid = a.pid AND NOT l.granted
) AS w ON true
WHERE a.wait_event_type = 'Lock'
  AND a.pid <> pg_backend_pid()
ORDER BY wait_s DESC NULLS LAST
