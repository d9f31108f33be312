-- purpose: good_job's schema version, which it keeps in no table of its own (Rails' schema_migrations holds the app's): 4 where good_jobs has the columns its 4.x migrations add (locked_by_id, locked_at, lock_type, is_discrete and executions_count)
SELECT CASE WHEN count(*) FILTER (WHERE a.attname IN ('locked_by_id', 'locked_at', 'is_discrete',
                                                      'executions_count')) = 4
            THEN CASE WHEN bool_or(a.attname = 'lock_type') THEN '4' ELSE '3' END END
FROM pg_attribute AS a
WHERE a.attrelid = %(table_oid)s::oid AND a.attnum > 0 AND NOT a.attisdropped
