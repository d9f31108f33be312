-- purpose: one state value's rows, read through the partial or state index on that value (one branch per value, so each index can serve its own): how many per group and row-lock holder (with the first jobs each holds), how many are due later, the oldest due one's age, how many are stale and which (the most overdue ids, up to the limit)
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
