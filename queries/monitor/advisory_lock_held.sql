-- purpose: whether another session holds the job's advisory lock (the bigint key {advisory_lock}, pg_locks objsubid 1) right now; uncorrelated, so pg_locks is read once per statement and hashed
coalesce({advisory_lock} IN (
    SELECT (l.classid::bigint << 32) | l.objid::bigint
    FROM pg_locks AS l
    WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
      AND l.pid <> pg_backend_pid()
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
), false)
