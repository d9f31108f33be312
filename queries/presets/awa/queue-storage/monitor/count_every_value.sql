-- purpose: exact row count per state value over awa's queue-storage jobs (the table is this folder's table.sql: one row per job across awa's planes), an ordinary read: no row locks, AccessShareLock only
SELECT {state}::text AS status, count(*)::bigint AS n
FROM {table} AS t
GROUP BY 1
