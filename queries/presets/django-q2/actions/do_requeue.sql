-- purpose: requeue django-q2 tasks still as observed (state, lock) and, unless forced, whose lock has passed: the lock set back to the task's enqueue time (as async_task left it), so any cluster of its key pulls it at its next poll (its dequeue takes a lock already passed)
UPDATE {table} AS t
SET "lock" = coalesce(least({created_at}, now()), now())
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token
