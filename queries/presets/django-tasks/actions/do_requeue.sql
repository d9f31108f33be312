-- purpose: requeue django-tasks tasks still as observed (status, worker, started_at) and, unless forced, past their start time or whose worker is gone: back to READY as enqueue leaves a task (started_at, finished_at, return value and exception cleared, run_after kept; worker_ids kept as the claims' history), so a db_worker claims it again
UPDATE {table} AS t
SET status = 'READY',
    started_at = NULL,
    finished_at = NULL,
    return_value = NULL,
    exception_class_path = '',
    traceback = ''
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token
