-- purpose: cancel DBOS workflows still as observed (status, executor, started_at_epoch_ms) and, unless forced, not running on a live executor: what DBOS's cancel_workflow does (CANCELLED, off its queue, deduplication id and owner_xid cleared, started_at_epoch_ms cleared, updated_at and completed_at now)
UPDATE {table} AS t
SET status = 'CANCELLED',
    owner_xid = NULL,
    queue_name = NULL,
    deduplication_id = NULL,
    started_at_epoch_ms = NULL,
    updated_at = (extract(epoch FROM now()) * 1000)::bigint,
    completed_at = (extract(epoch FROM now()) * 1000)::bigint
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token
