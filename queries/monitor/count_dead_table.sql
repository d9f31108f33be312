-- purpose: jobs in the dead-letter table (the dead role, where dead jobs are moved out of the queue table), in one statement: an ordinary count while the catalog's live rows (else its planner rows) are under the limit or when asked to be exact, else that estimate; the count is an InitPlan, which the server runs only when the CASE arm that reads it is taken
SELECT CASE WHEN decided.counted THEN (SELECT count(*) FROM {dead_table})
            ELSE round(decided.estimate) END::bigint AS rows,
       NOT decided.counted AS estimated
FROM (
    SELECT catalog.estimate, %(exact)s OR catalog.estimate < %(limit)s AS counted
    FROM (
        SELECT CASE WHEN pg_stat_get_live_tuples(c.oid) > 0
                    THEN pg_stat_get_live_tuples(c.oid)::float8
                    WHEN c.reltuples > 0 THEN c.reltuples::float8
                    ELSE 0 END AS estimate
        FROM pg_class AS c
        JOIN pg_namespace AS n ON n.oid = c.relnamespace
        WHERE n.nspname = %(schema)s AND c.relname = %(table)s
    ) AS catalog
) AS decided
