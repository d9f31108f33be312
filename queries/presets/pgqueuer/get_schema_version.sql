-- purpose: pgqueuer's schema version, which it keeps in no table: the columns its upgrades add, up to the ones its 1.x workers need (heartbeat, queue_manager_id, dedupe_key, execute_after, headers)
SELECT CASE WHEN count(*) FILTER (WHERE a.attname IN ('heartbeat', 'queue_manager_id', 'dedupe_key',
                                                      'execute_after')) = 4
            THEN CASE WHEN bool_or(a.attname = 'headers') THEN '1.x' ELSE '0.x' END END
FROM pg_attribute AS a
WHERE a.attrelid = %(table_oid)s::oid AND a.attnum > 0 AND NOT a.attisdropped
