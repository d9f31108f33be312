-- purpose: the statistics PostgreSQL already keeps of some tables' columns (pg_stats: null fraction, distinct values, most common values and their frequencies, and a low-cardinality column's histogram bounds): no table is read. Filtered by the names pg_stats exposes (a join on the tables' oids was planned as a nested loop over every column of the database: seconds at 10,000 tables); the caller keeps the exact schema and table pairs
SELECT s.schemaname::text AS schema_name,
       s.tablename::text AS table_name,
       s.inherited,
       s.attname::text AS column_name,
       s.null_frac::float8 AS null_frac,
       s.n_distinct::float8 AS n_distinct,
       s.most_common_vals::text::text[] AS common_values,
       s.most_common_freqs::float8[] AS common_freqs,
       CASE WHEN s.n_distinct BETWEEN 1 AND 200
            THEN s.histogram_bounds::text::text[] END AS histogram
FROM pg_stats AS s
WHERE s.tablename = ANY (%(names)s::name[])
  AND s.schemaname = ANY (%(schemas)s::name[])
