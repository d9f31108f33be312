-- purpose: procrastinate's schema version, which it keeps in no table: 3 where the functions and columns of its 3.x schema are there (procrastinate_retry_job_v2, procrastinate_finish_job_v1, abort_requested, the workers table)
SELECT CASE WHEN EXISTS (SELECT 1 FROM pg_proc AS p WHERE p.pronamespace = c.relnamespace
                                                     AND p.proname = 'procrastinate_retry_job_v2')
             AND EXISTS (SELECT 1 FROM pg_proc AS p WHERE p.pronamespace = c.relnamespace
                                                     AND p.proname = 'procrastinate_finish_job_v1')
             AND EXISTS (SELECT 1 FROM pg_attribute AS a WHERE a.attrelid = c.oid
                                                         AND a.attname = 'abort_requested')
             AND to_regclass(format('%%I.procrastinate_workers', n.nspname)) IS NOT NULL
            THEN '3' END
FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE c.oid = %(table_oid)s::oid
