-- purpose: the statements the server has seen run in this database (pg_stat_statements, normalised: constants read $1), the ones that write or lock rows, most called first; read only where the extension is installed and loaded
SELECT s.query, s.calls::bigint AS calls
FROM {pg_stat_statements} AS s
WHERE s.dbid = (SELECT d.oid FROM pg_database AS d WHERE d.datname = current_database())
  AND s.query ~* '(update|delete|insert|for\s+update|for\s+no\s+key\s+update|skip\s+locked)'
ORDER BY s.calls DESC
LIMIT 2000
