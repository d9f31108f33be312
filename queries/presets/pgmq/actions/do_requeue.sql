-- purpose: requeue pgmq messages still as observed (read_ct, the lease token) and, unless forced, past their vt: back to how pgmq.send leaves a message, visible now (vt = clock_timestamp(), as pgmq.set_vt(queue, msg_id, 0) writes it) with its reads counted afresh (read_ct 0, last_read_at cleared), so that a consumer's own limit on reads lets it run again; message, headers and enqueued_at kept
UPDATE {table} AS t
SET vt = clock_timestamp(),
    read_ct = 0,
    last_read_at = NULL
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token
