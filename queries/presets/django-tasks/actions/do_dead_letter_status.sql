-- purpose: fail django-tasks tasks still as observed (status, worker, started_at) and, unless forced, not running on a live worker: what the backend's set_failed writes (FAILED, finished_at, no return value), the exception class queuetop.DeadLettered and the operator's reason as its traceback
UPDATE {table} AS t
SET status = 'FAILED',
    finished_at = now(),
    return_value = NULL,
    exception_class_path = 'queuetop.DeadLettered',
    traceback = %(reason)s::text
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token
