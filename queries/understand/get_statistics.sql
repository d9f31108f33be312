-- purpose: the statistics PostgreSQL already keeps of some tables' columns (pg_stats: null fraction, distinct values, most common values and their frequencies, and a low-cardinality column's histogram bounds), and their live rows: no table is read
SELECT c.oid::bigint AS oid,
       s.attname::text AS column_name,
       s.null_frac::float8 AS null_frac,
       s.n_distinct::float8 AS n_distinct,
       s.most_common_vals::text::text[] AS common_values,
       s.most_common_freqs::float8[] AS common_freqs,
       CASE WHEN s.n_distinct BETWEEN 1 AND 200
            THEN s.histogram_bounds::text::text[] END AS histogram,
       coalesce(st.n_live_tup, 0)::float8 AS live_rows
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
JOIN pg_stats AS s ON s.schemaname = n.nspname AND s.tablename = c.relname
LEFT JOIN pg_stat_user_tables AS st ON st.relid = c.oid
WHERE c.oid = ANY (%(oids)s::oid[])
  AND s.inherited = (c.relkind = 'p')
