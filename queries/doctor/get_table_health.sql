-- purpose: the queue table's churn and vacuum state for doctor: live and dead rows, updates and how many were HOT, when (auto)vacuum last ran, its storage options (fillfactor, per-table autovacuum settings) and the server's autovacuum settings; catalog and statistics only, never the table
SELECT pg_stat_get_live_tuples(c.oid) AS live_rows,
       pg_stat_get_dead_tuples(c.oid) AS dead_rows,
       pg_stat_get_tuples_inserted(c.oid) AS inserted,
       pg_stat_get_tuples_updated(c.oid) AS updated,
       pg_stat_get_tuples_hot_updated(c.oid) AS hot_updated,
       pg_stat_get_tuples_deleted(c.oid) AS deleted,
       greatest(pg_stat_get_last_autovacuum_time(c.oid),
                pg_stat_get_last_vacuum_time(c.oid)) AS last_vacuum,
       extract(epoch FROM now() - greatest(pg_stat_get_last_autovacuum_time(c.oid),
                                           pg_stat_get_last_vacuum_time(c.oid)))::float8
           AS last_vacuum_age_s,
       pg_stat_get_autovacuum_count(c.oid) AS autovacuum_count,
       coalesce(c.reloptions, '{}') AS reloptions,
       current_setting('autovacuum') = 'on' AS autovacuum_on,
       current_setting('autovacuum_vacuum_threshold')::float8 AS vacuum_threshold,
       current_setting('autovacuum_vacuum_scale_factor')::float8 AS vacuum_scale_factor
FROM pg_class AS c
WHERE c.oid = %(oid)s::oid
