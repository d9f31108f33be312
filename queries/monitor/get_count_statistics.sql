-- purpose: what the catalog knows of a table's size and of one column's values (live rows, planner rows, most common values and their frequencies), for estimates; reads the catalog only, never the table (the live-row counter through its function: the pg_stat_all_tables view computes every counter of every table)
SELECT c.reltuples::float8 AS reltuples,
       pg_stat_get_live_tuples(c.oid)::float8 AS live_rows,
       st.null_frac::float8 AS null_frac,
       st.n_distinct::float8 AS n_distinct,
       st.most_common_vals::text::text[] AS common_values,
       st.most_common_freqs::float8[] AS common_freqs
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
LEFT JOIN pg_stats AS st
       ON st.schemaname = n.nspname AND st.tablename = c.relname AND st.attname = %(column)s
WHERE n.nspname = %(schema)s AND c.relname = %(table)s
