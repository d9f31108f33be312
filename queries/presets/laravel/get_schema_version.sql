-- purpose: the Laravel jobs table, which keeps no version: 1 where the columns of make:queue-table's migration are there with their integer times (queue, payload, attempts, reserved_at, available_at, created_at)
SELECT CASE WHEN (SELECT count(*) FROM pg_attribute AS a
                  WHERE a.attrelid = c.oid AND NOT a.attisdropped
                    AND (a.attname IN ('queue', 'payload', 'attempts')
                         OR (a.attname IN ('reserved_at', 'available_at', 'created_at')
                             AND a.atttypid IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype)))) = 6
            THEN '1' END
FROM pg_class AS c
WHERE c.oid = %(table_oid)s::oid
