-- purpose: one state value's rows, read through the partial or state index on that value (one branch per value, so each index can serve its own): how many per group and row-lock holder, how many are due later, the oldest due one's age, how many are stale
SELECT {state}::text AS status,
       {group}::text AS grp,
       CASE WHEN t.xmax = ANY (%(xids)s::text[]::xid[]) THEN t.xmax::text END AS holder_xid,
       count(*)::bigint AS n,
       (array_agg(t.{id}::text ORDER BY t.{id})
            FILTER (WHERE t.xmax = ANY (%(xids)s::text[]::xid[])))[1:5] AS held_ids,
       count(*) FILTER (WHERE {scheduled_at} > now())::bigint AS later,
       extract(epoch FROM now() - min({ready_since})
               FILTER (WHERE NOT coalesce({scheduled_at} > now(), false)))::float8 AS oldest_s,
       {stale_count}::bigint AS stale
FROM {table} AS t
WHERE {state} = {value}
GROUP BY 1, 2, 3
