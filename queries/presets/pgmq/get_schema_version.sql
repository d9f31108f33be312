-- purpose: pgmq's schema version, which an install by its SQL script keeps nowhere: '1.10' where a queue pgmq.meta lists has the columns of pgmq 1.10 on (last_read_at and headers), '1.5' where it has headers but no last_read_at (1.5 to 1.9); older queues (no headers) are not mapped
SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM {schema}.meta AS m WHERE 'q_' || m.queue_name = c.relname)
            THEN NULL
            WHEN count(*) FILTER (WHERE a.attname IN ('msg_id', 'read_ct', 'enqueued_at', 'vt',
                                                       'message', 'headers')) < 6
            THEN NULL
            WHEN bool_or(a.attname = 'last_read_at') THEN '1.10'
            ELSE '1.5' END
FROM pg_class AS c
JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
WHERE c.oid = %(table_oid)s::oid
GROUP BY c.oid, c.relname
