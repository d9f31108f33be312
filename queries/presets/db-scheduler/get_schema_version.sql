-- purpose: db-scheduler's schema version, which it keeps in no table: 15 where scheduled_tasks has the columns of its postgresql_tables.sql with priority (added in 15.0), 14 where it has them without priority (14.x and before)
SELECT CASE WHEN b.base = 11 AND b.priority THEN '15'
            WHEN b.base = 11 THEN '14' END
FROM (SELECT count(*) FILTER (WHERE a.attname IN ('task_name', 'task_instance', 'task_data',
                                                  'execution_time', 'picked', 'picked_by',
                                                  'last_success', 'last_failure',
                                                  'consecutive_failures', 'last_heartbeat',
                                                  'version')) AS base,
             bool_or(a.attname = 'priority') AS priority
      FROM pg_attribute AS a
      WHERE a.attrelid = %(table_oid)s::oid AND a.attnum > 0 AND NOT a.attisdropped) AS b
