-- purpose: reject dramatiq-pg messages still as observed (state, consumer, mtime) and, unless forced, not worked by a live consumer (the transaction takes the message's advisory lock, as a consumer would): what its nack writes when dramatiq fails a message for good (state rejected, the message rewritten with the reason as options.traceback, as the Retries middleware stores a failure), then the notify on the queue's ack channel its nack sends
WITH rejected AS (
    UPDATE {table} AS t
    SET state = 'rejected',
        message = jsonb_set(t.message, ARRAY['options'],
                            coalesce(t.message -> 'options', jsonb_build_object())
                            || jsonb_build_object('traceback', %(reason)s::text))
    FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token)
    WHERE {job_id} = o.id::{id_type}
      AND {guard}
      AND pg_try_advisory_xact_lock({advisory_lock})
    RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token,
              t.queue_name AS queue, t.message AS message
)
SELECT r.queuetop_given, r.id, r.new_token
FROM rejected AS r
CROSS JOIN LATERAL pg_notify('dramatiq.' || r.queue || '.ack',
    CASE WHEN octet_length(r.message::text) >= 8000
         THEN jsonb_build_object('message_id', r.id)::text
         ELSE r.message::text
    END) AS notified
