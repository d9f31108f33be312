-- purpose: one state value's jobs on awa's queue storage (the table is this folder's table.sql), as the generic count_value reads them but without row-lock holders (awa's queue-storage workers hold none on a job): how many per group, how many are due later, the oldest due one's age, how many are stale and which
SELECT {state}::text AS status,
       {group}::text AS grp,
       NULL::text AS holder_xid,
       count(*)::bigint AS n,
       NULL::text[] AS held_ids,
       count(*) FILTER (WHERE {scheduled_at} > now())::bigint AS later,
       extract(epoch FROM now() - min({ready_since})
               FILTER (WHERE NOT coalesce({scheduled_at} > now(), false)))::float8 AS oldest_s,
       {stale_count}::bigint AS stale,
       {stale_ids} AS stale_ids
FROM {table} AS t
WHERE {value_rows}
GROUP BY 1, 2
