-- purpose: delayed_job's schema version, which it keeps in no table: 4 where the columns of its 4.x migration are there (handler, run_at, locked_at, locked_by, failed_at, attempts, priority, queue)
SELECT CASE WHEN (SELECT count(*) FROM pg_attribute AS a
                  WHERE a.attrelid = c.oid AND NOT a.attisdropped
                    AND a.attname IN ('handler', 'run_at', 'locked_at', 'locked_by', 'failed_at',
                                      'attempts', 'priority', 'queue')) = 8
            THEN '4' END
FROM pg_class AS c
WHERE c.oid = %(table_oid)s::oid
