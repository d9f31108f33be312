-- purpose: the last statement of every other client session of this database (pg_stat_activity: a worker's claim with its literal values where it sends them inline), the ones that write or lock rows
SELECT a.query, 1::bigint AS calls
FROM pg_stat_activity AS a
WHERE a.datname = current_database()
  AND a.pid <> pg_backend_pid()
  AND a.backend_type = 'client backend'
  AND a.application_name NOT IN ('queuetop', 'queuetop-action', 'queuetop-admin')
  AND a.query ~* '(update|delete|insert|for\s+update|for\s+no\s+key\s+update|skip\s+locked)'
