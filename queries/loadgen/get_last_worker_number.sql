-- purpose: the highest K of queuetop-worker-K among live sessions and running jobs, so new workers never reuse a name a lease still points at
SELECT coalesce(max(k), 0)
FROM (
    SELECT substring(a.application_name FROM '^queuetop-worker-([0-9]+)$')::bigint AS k
    FROM pg_stat_activity AS a
    UNION ALL
    SELECT substring({worker}::text FROM '^queuetop-worker-([0-9]+)$')::bigint
    FROM {table} AS t
    WHERE t.{status} = ANY (%(running_values)s::{status_type}[])
) AS names
