-- purpose: queue_classic's schema version, which it keeps in no table: 4 where its 4.x columns are there (q_name, method, args of type jsonb, locked_at, locked_by, scheduled_at)
SELECT CASE WHEN (SELECT count(*) FROM pg_attribute AS a
                  WHERE a.attrelid = c.oid AND NOT a.attisdropped
                    AND (a.attname IN ('q_name', 'method', 'locked_at', 'locked_by', 'scheduled_at')
                         OR (a.attname = 'args' AND a.atttypid = 'jsonb'::regtype))) = 6
            THEN '4' END
FROM pg_class AS c
WHERE c.oid = %(table_oid)s::oid
