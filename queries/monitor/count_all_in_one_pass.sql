-- purpose: where no index serves the active rows, one pass over the table gives everything the counts need: rows per state value, group and row-lock holder, how many are due later, the oldest due age, how many are stale and which (their ids, most overdue first)
SELECT {state}::text AS status,
       {group}::text AS grp,
       CASE WHEN t.xmax = ANY (%(xids)s::text[]::xid[]) THEN t.xmax::text END AS holder_xid,
       count(*)::bigint AS n,
       (array_agg(t.{id}::text ORDER BY t.{id})
            FILTER (WHERE t.xmax = ANY (%(xids)s::text[]::xid[])))[1:5] AS held_ids,
       count(*) FILTER (WHERE {scheduled_at} > now())::bigint AS later,
       extract(epoch FROM now() - min({ready_since})
               FILTER (WHERE NOT coalesce({scheduled_at} > now(), false)))::float8 AS oldest_s,
       count(*) FILTER (WHERE {is_stale})::bigint AS stale,
       (array_agg(t.{id}::text ORDER BY {expires_at}, t.{id}) FILTER (WHERE {is_stale}))[1:%(limit)s]
           AS stale_ids
FROM {table} AS t
GROUP BY 1, 2, 3
