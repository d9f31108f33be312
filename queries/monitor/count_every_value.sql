-- purpose: exact row count per state value, over the whole table (an ordinary read: no row locks, AccessShareLock only); for finished states where the table is small, or on demand
SELECT {state}::text AS status, count(*)::bigint AS n
FROM {table} AS t
GROUP BY 1
