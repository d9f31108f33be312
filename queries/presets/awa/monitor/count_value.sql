-- purpose: one state value's rows, as the generic count_value reads them, in awa.jobs_hot and in awa.scheduled_jobs (the same columns: awa keeps its scheduled and retryable jobs there, and their CHECKs keep each state in one of the two): how many per group and row-lock holder (with the first jobs each holds), how many are due later, the oldest due one's age, how many are stale and which
SELECT {state}::text AS status,
       {group}::text AS grp,
       {holder_xid} AS holder_xid,
       count(*)::bigint AS n,
       {held_ids} AS held_ids,
       count(*) FILTER (WHERE {scheduled_at} > now())::bigint AS later,
       extract(epoch FROM now() - min({ready_since})
               FILTER (WHERE NOT coalesce({scheduled_at} > now(), false)))::float8 AS oldest_s,
       {stale_count}::bigint AS stale,
       {stale_ids} AS stale_ids
FROM {table} AS t
WHERE {value_rows}
GROUP BY 1, 2, 3
UNION ALL
SELECT {state}::text AS status,
       {group}::text AS grp,
       {holder_xid} AS holder_xid,
       count(*)::bigint AS n,
       {held_ids} AS held_ids,
       count(*) FILTER (WHERE {scheduled_at} > now())::bigint AS later,
       extract(epoch FROM now() - min({ready_since})
               FILTER (WHERE NOT coalesce({scheduled_at} > now(), false)))::float8 AS oldest_s,
       {stale_count}::bigint AS stale,
       {stale_ids} AS stale_ids
FROM {schema}.scheduled_jobs AS t
WHERE {value_rows}
GROUP BY 1, 2, 3
