-- purpose: what holds back the xmin horizon of this database's tables (so vacuum cannot remove dead rows newer than it) for doctor: its sessions with an old snapshot or transaction, replication slots (they hold every database back) and its prepared transactions, oldest first; excluding this session; a session waiting on a lock names its blockers (it holds the horizon only until they end)
SELECT 'session' AS kind,
       a.pid::text AS name,
       coalesce(a.application_name, '') AS application_name,
       coalesce(a.state, '') AS state,
       extract(epoch FROM now() - coalesce(a.xact_start, a.query_start))::float8 AS age_s,
       age(coalesce(a.backend_xmin, a.backend_xid))::bigint AS xid_age,
       pg_blocking_pids(a.pid) AS blocked_by
FROM pg_stat_activity AS a
WHERE coalesce(a.backend_xmin, a.backend_xid) IS NOT NULL
  AND a.backend_type = 'client backend'
  AND a.datname = current_database()
  AND a.pid <> pg_backend_pid()
  AND extract(epoch FROM now() - coalesce(a.xact_start, a.query_start)) >= %(min_age_s)s
UNION ALL
SELECT 'replication slot', s.slot_name::text, '', CASE WHEN s.active THEN 'active' ELSE 'inactive' END,
       NULL::float8,
       greatest(age(s.xmin), age(s.catalog_xmin))::bigint, '{}'::int[]
FROM pg_replication_slots AS s
WHERE s.xmin IS NOT NULL OR s.catalog_xmin IS NOT NULL
UNION ALL
SELECT 'prepared transaction', p.gid, '', 'prepared',
       extract(epoch FROM now() - p.prepared)::float8,
       age(p.transaction)::bigint, '{}'::int[]
FROM pg_prepared_xacts AS p
WHERE p.database = current_database()
  AND extract(epoch FROM now() - p.prepared) >= %(min_age_s)s
ORDER BY xid_age DESC NULLS LAST, age_s DESC NULLS LAST
