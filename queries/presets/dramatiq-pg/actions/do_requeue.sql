-- purpose: requeue dramatiq-pg messages still as observed (state, consumer, mtime) and, unless forced, whose consumer's advisory lock is free (the transaction takes that lock, as a consumer would): queued again, as its recover command and its broker's requeue write; a delayed or retrying one moved to its queue without its eta, as a worker does once the eta passes; then the notify its enqueue sends, so a listening consumer takes it at once
WITH requeued AS (
    UPDATE {table} AS t
    SET state = 'queued',
        queue_name = {group},
        message = jsonb_set(t.message #- ARRAY['options', 'eta'], ARRAY['queue_name'], to_jsonb({group}))
    FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token)
    WHERE {job_id} = o.id::{id_type}
      AND {guard}
      AND pg_try_advisory_xact_lock({advisory_lock})
    RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token,
              t.queue_name AS queue, t.message AS message
)
SELECT r.queuetop_given, r.id, r.new_token
FROM requeued AS r
CROSS JOIN LATERAL pg_notify('dramatiq.' || r.queue || '.enqueue',
    CASE WHEN octet_length(r.message::text) >= 8000
         THEN jsonb_build_object('message_id', r.id)::text
         ELSE r.message::text
    END) AS notified
