-- purpose: active queue rows row-locked right now, per holder pid: a row's xmax joined to a live transaction in pg_locks (takes no lock)
SELECT t.{status}::text AS status, l.pid, coalesce(a.application_name, '') AS application_name,
       count(*)::bigint AS n
FROM {table} AS t
JOIN pg_locks AS l
  ON l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
 AND l.transactionid = t.xmax
LEFT JOIN pg_stat_activity AS a ON a.pid = l.pid
WHERE t.{status} = ANY (%(values)s::{status_type}[])
  AND t.xmax <> '0'::xid
  AND l.pid <> pg_backend_pid()
GROUP BY 1, 2, 3
