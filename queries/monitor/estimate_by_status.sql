-- purpose: planner estimate of rows per status value, from pg_stats most-common values
SELECT v.status, round(v.freq * greatest(c.reltuples, 0))::bigint AS n
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname AND s.attname = %(column)s
CROSS JOIN LATERAL unnest(s.most_common_vals::text::text[], s.most_common_freqs) AS v(status, freq)
WHERE n.nspname = %(schema)s AND c.relname = %(table)s
