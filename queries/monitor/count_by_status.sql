-- purpose: exact row count per raw status value (an ordinary read: no row locks, AccessShareLock only)
SELECT t.{status}::text AS status, count(*)::bigint AS n
FROM {table} AS t
GROUP BY 1
