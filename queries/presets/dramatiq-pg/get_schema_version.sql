-- purpose: dramatiq-pg's schema, which keeps no version: 1 where its schema.sql (unchanged from 0.8 to 0.12) is there: the columns message_id (uuid), queue_name, state, mtime, message, result, result_ttl and a state enum of exactly queued, consumed, rejected, done
SELECT CASE WHEN (SELECT count(*) FROM pg_attribute AS a
                  WHERE a.attrelid = c.oid AND NOT a.attisdropped
                    AND (a.attname IN ('queue_name', 'state', 'mtime', 'message', 'result', 'result_ttl')
                         OR (a.attname = 'message_id' AND a.atttypid = 'uuid'::regtype))) = 7
             AND (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder)
                  FROM pg_attribute AS a
                  JOIN pg_enum AS e ON e.enumtypid = a.atttypid
                  WHERE a.attrelid = c.oid AND a.attname = 'state')
                 = ARRAY['queued', 'consumed', 'rejected', 'done']
            THEN '1' END
FROM pg_class AS c
WHERE c.oid = %(table_oid)s::oid
