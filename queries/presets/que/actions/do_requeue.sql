-- purpose: run errored jobs now, as Que's own retry would at run_at (run_at = now(), error_count kept: the backoff goes on), only while still as observed, unlocked (the transaction takes each job's advisory lock, as a Que locker would, so no locker can take it meanwhile) and not refused
UPDATE {table} AS t
SET run_at = now()
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {state}::text = o.status
  AND o.status = ANY (%(from_values)s::text[])
  AND o.status <> ALL (%(running_values)s::text[])
  AND {worker}::text IS NOT DISTINCT FROM o.worker
  AND {requeue_refusal} IS NULL
  AND pg_try_advisory_xact_lock({job_id})
RETURNING o.id AS queuetop_given, {job_id}::text AS id, NULL::text AS new_token
