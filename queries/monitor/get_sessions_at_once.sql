-- purpose: the sessions around the queue in one moment (pg_locks and pg_stat_activity read once each): every lock, the sessions holding or awaiting them, who blocks each waiter (pg_blocking_pids, for waiters only), the queue rows held now with their holders decoded from xmax (a running transaction, or the running members of a multixact with their modes), the row each session is queued on (its tuple lock: first in line when granted), and the database's deadlock count
WITH l AS MATERIALIZED (
    SELECT l.locktype, l.relation, l.page, l.tuple, l.transactionid::text AS xid,
           l.classid, l.objid, l.objsubid, l.pid, l.mode, l.granted, l.waitstart
    FROM pg_locks AS l
    WHERE l.pid IS NOT NULL AND l.pid <> pg_backend_pid()
      AND (l.database IS NULL
           OR l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))
      -- every transaction holds its own virtualxid: not a lock to see
      AND NOT (l.locktype = 'virtualxid' AND l.granted)
),
a AS MATERIALIZED (
    SELECT a.pid, a.backend_start, coalesce(a.application_name, '') AS application_name,
           coalesce(a.usename::text, '') AS usename, a.state, a.xact_start,
           extract(epoch FROM now() - a.xact_start)::float8 AS xact_age_s,
           extract(epoch FROM now() - a.state_change)::float8 AS idle_s,
           coalesce(a.wait_event_type || ':' || a.wait_event, '') AS wait_event,
           coalesce(a.query, '') AS query,
           age(coalesce(a.backend_xmin, a.backend_xid))::int AS xmin_age,
           a.datid
    FROM pg_stat_activity AS a
    WHERE a.pid <> pg_backend_pid()
),
queue AS (  -- the queue table, and its partitions where it has some
    SELECT c.oid
    FROM pg_class AS c
    JOIN pg_namespace AS n ON n.oid = c.relnamespace
    WHERE n.nspname = {schema_name} AND c.relname = {table_name}
    UNION
    SELECT p.relid::oid
    FROM pg_class AS c
    JOIN pg_namespace AS n ON n.oid = c.relnamespace
    CROSS JOIN LATERAL pg_partition_tree(c.oid) AS p
    WHERE n.nspname = {schema_name} AND c.relname = {table_name}
),
-- the transactions running now, each with its session (a subtransaction's id too)
xacts AS MATERIALIZED (
    SELECT l.xid, l.pid FROM l
    WHERE l.locktype = 'transactionid' AND l.mode = 'ExclusiveLock' AND l.granted
),
waiters AS MATERIALIZED (
    SELECT w.pid, pg_blocking_pids(w.pid) AS blocked_by,
           extract(epoch FROM now() - min(w.waitstart))::float8 AS wait_s
    FROM l AS w
    WHERE NOT w.granted
    GROUP BY w.pid
),
-- a session waiting for a row holds (first in line) or awaits (behind it) the row's tuple lock
queued AS MATERIALIZED (
    SELECT l.pid, l.relation, ('(' || l.page || ',' || l.tuple || ')')::tid AS tid, l.granted
    FROM l
    WHERE l.locktype = 'tuple' AND l.relation IN (SELECT oid FROM queue)
),
-- the queue rows to decode: those queued on, those seen queued on before, the active ones
cand AS MATERIALIZED ({queue_rows}),
xm AS (SELECT DISTINCT c.xmax FROM cand AS c WHERE c.xmax <> '0'),
holders AS MATERIALIZED (
    SELECT xm.xmax, x.pid, NULL::text AS mode
    FROM xm JOIN xacts AS x ON x.xid = xm.xmax
    UNION ALL
    SELECT xm.xmax, x.pid, m.mode
    FROM xm
    CROSS JOIN LATERAL pg_get_multixact_members({multixact}) AS m
    JOIN xacts AS x ON x.xid = m.xid::text
)
SELECT
    (SELECT coalesce(json_agg(k ORDER BY k.granted, k.wait_s DESC NULLS LAST,
                              k.on_queue_table DESC, k.pid), '[]')
     FROM (SELECT l.pid, l.locktype, l.mode, l.granted,
                  CASE WHEN l.relation IS NOT NULL THEN l.relation::regclass::text END AS relation,
                  coalesce(l.relation IN (SELECT oid FROM queue), false) AS on_queue_table,
                  extract(epoch FROM now() - l.waitstart)::float8 AS wait_s,
                  l.page, l.tuple::int AS tuple_index, l.xid,
                  CASE WHEN l.locktype = 'advisory' AND l.objsubid = 1
                       THEN (l.classid::bigint << 32) | l.objid::bigint END AS advisory_key
           FROM l
           ORDER BY l.granted, l.waitstart NULLS LAST, l.pid
           LIMIT {row_limit}) AS k) AS locks,
    (SELECT coalesce(json_agg(s), '[]')
     FROM (SELECT a.pid, a.backend_start, a.application_name, a.usename, a.state, a.xact_start,
                  a.xact_age_s, a.idle_s, a.wait_event, a.query, a.xmin_age,
                  (SELECT count(*) FROM l WHERE l.pid = a.pid) AS locks_held
           FROM a
           WHERE a.pid IN (SELECT l.pid FROM l)
              OR a.state IN ('idle in transaction', 'idle in transaction (aborted)')
              OR a.pid IN (SELECT unnest(w.blocked_by) FROM waiters AS w)) AS s) AS sessions,
    (SELECT coalesce(json_agg(w), '[]') FROM waiters AS w) AS waits,
    (SELECT coalesce(json_agg(g), '[]')
     FROM (SELECT h.pid, h.mode, c.status, c.grp, count(*) AS n,
                  (array_agg(c.id ORDER BY c.id))[1:5] AS ids
           FROM cand AS c JOIN holders AS h ON h.xmax = c.xmax
           GROUP BY 1, 2, 3, 4) AS g) AS held,
    (SELECT coalesce(json_agg(r), '[]')
     FROM (SELECT c.status, c.grp, count(*) AS n
           FROM cand AS c
           WHERE c.xmax IN (SELECT h.xmax FROM holders AS h)
           GROUP BY 1, 2) AS r) AS locked,
    (SELECT coalesce(json_agg(q), '[]')
     FROM (SELECT q.pid, q.relation, q.tid::text AS tid, q.granted, c.id, c.status,
                  (SELECT json_agg(json_build_array(h.pid, h.mode) ORDER BY h.pid)
                   FROM holders AS h WHERE h.xmax = c.xmax) AS holders
           FROM queued AS q
           LEFT JOIN cand AS c ON c.tableoid = q.relation AND c.ctid = q.tid) AS q) AS queued,
    (SELECT coalesce(json_agg(json_build_array(x.xid, x.pid)), '[]') FROM xacts AS x) AS xacts,
    (SELECT d.deadlocks FROM pg_stat_database AS d
     WHERE d.datname = current_database()) AS deadlocks,
    current_user::text AS role,
    pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') AS sees_all,
    EXISTS (SELECT 1 FROM a
            WHERE a.datid IS NOT NULL AND a.query = '<insufficient privilege>') AS some_hidden
