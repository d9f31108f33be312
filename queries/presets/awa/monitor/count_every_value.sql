-- purpose: exact row count per state value over awa.jobs_hot and awa.scheduled_jobs (where awa keeps its scheduled and retryable jobs; the same columns), an ordinary read: no row locks, AccessShareLock only
SELECT {state}::text AS status, count(*)::bigint AS n
FROM {table} AS t
GROUP BY 1
UNION ALL
SELECT {state}::text AS status, count(*)::bigint AS n
FROM {schema}.scheduled_jobs AS t
GROUP BY 1
