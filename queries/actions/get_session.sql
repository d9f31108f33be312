-- purpose: one backend's identity and state as an action checks it: pid, backend start, kind, state, transaction start, role, application, query
SELECT a.pid,
       a.backend_start,
       coalesce(a.backend_type, '') AS backend_type,
       a.state,
       a.xact_start,
       coalesce(a.usename::text, '') AS "user",
       coalesce(a.application_name, '') AS application_name,
       left(coalesce(a.query, ''), 500) AS query,
       a.pid = pg_backend_pid() AS own
FROM pg_stat_activity AS a
WHERE a.pid = %(pid)s
