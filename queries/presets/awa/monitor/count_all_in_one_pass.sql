-- purpose: the generic one pass (rows per state value, group and row-lock holder, due later, oldest due age, stale and which), over awa.jobs_hot and awa.scheduled_jobs (where awa keeps its scheduled and retryable jobs; the same columns, each state in one of the two by their CHECKs): one pass over each
WITH grouped AS (
    SELECT {state}::text AS status,
           {group}::text AS grp,
           {holder_xid} AS holder_xid,
           count(*)::bigint AS n,
           {held_ids} AS held_ids,
           count(*) FILTER (WHERE {state}::text = ANY (%(ready)s::text[])
                                  AND {scheduled_at} > now())::bigint AS later,
           extract(epoch FROM now() - min({ready_since}) FILTER (
               WHERE {state}::text = ANY (%(ready)s::text[])
                 AND NOT coalesce({scheduled_at} > now(), false)))::float8 AS oldest_s,
           count(*) FILTER (WHERE {is_stale})::bigint AS stale,
           array_agg(ROW(({expires_at})::timestamptz, {job_id}::text)) FILTER (WHERE {is_stale}) AS stale_rows
    FROM {table} AS t
    GROUP BY 1, 2, 3
    UNION ALL
    SELECT {state}::text AS status,
           {group}::text AS grp,
           {holder_xid} AS holder_xid,
           count(*)::bigint AS n,
           {held_ids} AS held_ids,
           count(*) FILTER (WHERE {state}::text = ANY (%(ready)s::text[])
                                  AND {scheduled_at} > now())::bigint AS later,
           extract(epoch FROM now() - min({ready_since}) FILTER (
               WHERE {state}::text = ANY (%(ready)s::text[])
                 AND NOT coalesce({scheduled_at} > now(), false)))::float8 AS oldest_s,
           count(*) FILTER (WHERE {is_stale})::bigint AS stale,
           array_agg(ROW(({expires_at})::timestamptz, {job_id}::text)) FILTER (WHERE {is_stale}) AS stale_rows
    FROM {schema}.scheduled_jobs AS t
    GROUP BY 1, 2, 3
)
SELECT g.status, g.grp, g.holder_xid, g.n, g.held_ids, g.later, g.oldest_s, g.stale,
       -- a multixact's members with their modes ('xid:mode'), to tell which sessions hold it
       CASE WHEN left(g.holder_xid, 1) = 'm'
            THEN (SELECT array_agg(m.xid::text || ':' || m.mode)
                  FROM pg_get_multixact_members(substr(g.holder_xid, 2)::xid) AS m) END AS members,
       (SELECT array_agg(s.id ORDER BY s.expires_at, s.id)
        FROM (SELECT x.expires_at, x.id
              FROM unnest(g.stale_rows) AS x(expires_at timestamptz, id text)
              ORDER BY x.expires_at, x.id
              LIMIT %(limit)s) AS s) AS stale_ids
FROM grouped AS g
