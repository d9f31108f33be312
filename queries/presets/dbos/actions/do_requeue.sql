-- purpose: requeue DBOS workflows still as observed (status, executor, started_at_epoch_ms) and, unless forced, whose executor is gone or whose start is past stale_after: what DBOS's recovery does (reenqueue_for_recovery: ENQUEUED, owner_xid and started_at_epoch_ms cleared, updated_at now, kept on its queue or put on DBOS's internal recovery queue), so an executor dequeues it and reruns it from its last completed step
UPDATE {table} AS t
SET status = 'ENQUEUED',
    owner_xid = NULL,
    started_at_epoch_ms = NULL,
    updated_at = (extract(epoch FROM now()) * 1000)::bigint,
    queue_name = coalesce(t.queue_name, '_dbos_internal_queue')
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token
