-- purpose: terminate a backend only if it is still the session observed: same pid and backend start (not a reused pid), and the same state and transaction when those were observed
SELECT pg_terminate_backend(a.pid) AS signalled
FROM pg_stat_activity AS a
WHERE a.pid = %(pid)s
  AND a.pid <> pg_backend_pid()
  AND a.backend_type = 'client backend'
  AND a.backend_start = %(backend_start)s
  AND (%(state)s::text IS NULL
       OR a.state = %(state)s::text
       OR (%(state)s::text = 'idle in transaction' AND a.state = 'idle in transaction (aborted)'))
  AND (%(xact_start)s::timestamptz IS NULL OR a.xact_start = %(xact_start)s::timestamptz)
