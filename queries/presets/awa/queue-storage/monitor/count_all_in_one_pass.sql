-- purpose: the generic one pass (rows per state value and group, due later, oldest due age, stale and which) over awa's queue-storage jobs (the table is this folder's table.sql, one row per job across awa's planes); no row-lock holders: awa's queue-storage workers hold no lock on a job while they work (a claim commits a receipt at once), and a query's rows carry no xmax
WITH grouped AS (
    SELECT {state}::text AS status,
           {group}::text AS grp,
           count(*)::bigint AS n,
           count(*) FILTER (WHERE {state}::text = ANY (%(ready)s::text[])
                                  AND {scheduled_at} > now())::bigint AS later,
           extract(epoch FROM now() - min({ready_since}) FILTER (
               WHERE {state}::text = ANY (%(ready)s::text[])
                 AND NOT coalesce({scheduled_at} > now(), false)))::float8 AS oldest_s,
           count(*) FILTER (WHERE {is_stale})::bigint AS stale,
           array_agg(ROW(({expires_at})::timestamptz, {job_id}::text)) FILTER (WHERE {is_stale}) AS stale_rows
    FROM {table} AS t
    GROUP BY 1, 2
)
SELECT g.status, g.grp, NULL::text AS holder_xid, g.n, NULL::text[] AS held_ids, g.later,
       g.oldest_s, g.stale, NULL::text[] AS members,
       (SELECT array_agg(s.id ORDER BY s.expires_at, s.id)
        FROM (SELECT x.expires_at, x.id
              FROM unnest(g.stale_rows) AS x(expires_at timestamptz, id text)
              ORDER BY x.expires_at, x.id
              LIMIT %(limit)s) AS s) AS stale_ids
FROM grouped AS g
