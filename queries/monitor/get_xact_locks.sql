-- purpose: the transactions other sessions hold open right now (their transaction-id locks), to tell which queue rows they have row-locked: a row's xmax is one of them
SELECT l.transactionid::text AS xid, l.pid, coalesce(a.application_name, '') AS application_name
FROM pg_locks AS l
LEFT JOIN pg_stat_activity AS a ON a.pid = l.pid
WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
  AND l.pid <> pg_backend_pid()
