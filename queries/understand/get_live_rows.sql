-- purpose: the live rows the statistics collector counts for some tables (no table is read)
SELECT t.oid::bigint AS oid, pg_stat_get_live_tuples(t.oid)::float8 AS live_rows
FROM unnest(%(oids)s::oid[]) AS t(oid)
