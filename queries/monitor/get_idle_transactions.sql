-- purpose: sessions idle in a transaction: transaction age, idle time, locks held, and the xmin horizon they hold back
SELECT a.pid,
       a.backend_start,
       coalesce(a.application_name, '') AS application_name,
       coalesce(a.usename::text, '') AS "user",
       extract(epoch FROM now() - a.xact_start)::float8 AS xact_age_s,
       extract(epoch FROM now() - a.state_change)::float8 AS idle_s,
       coalesce(l.n, 0)::int AS locks_held,
       age(coalesce(a.backend_xmin, a.backend_xid))::int AS xmin_age,
       coalesce(a.query, '') AS query,
       a.xact_start
FROM pg_stat_activity AS a
-- counted as the locks view lists them: a session's own virtualxid lock is not one to see
LEFT JOIN (SELECT pid, count(*) AS n FROM pg_locks
           WHERE NOT (locktype = 'virtualxid' AND granted)
           GROUP BY pid) AS l ON l.pid = a.pid
WHERE a.state IN ('idle in transaction', 'idle in transaction (aborted)')
  AND a.pid <> pg_backend_pid()
ORDER BY xact_age_s DESC NULLS LAST
