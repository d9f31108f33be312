-- purpose: the backend pid of the session holding the job's advisory lock (the bigint key {advisory_lock}), else NULL; correlated: for reads of a few rows only
(SELECT min(l.pid)
 FROM pg_locks AS l
 WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
   AND l.pid <> pg_backend_pid()
   AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
   AND (l.classid::bigint << 32) | l.objid::bigint = {advisory_lock})
