-- purpose: Que's expire_job (expired_at = now(), error_count + 1), the reason as last_error_message, only while the jobs are still as observed and unlocked (the transaction takes each job's advisory lock first, as a Que locker would: a job a live locker holds is left alone)
UPDATE {table} AS t
SET expired_at = now(),
    error_count = t.error_count + 1,
    last_error_message = left(%(reason)s::text, 500)
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {state}::text = o.status
  AND o.status = ANY (%(from_values)s::text[])
  AND {worker}::text IS NOT DISTINCT FROM o.worker
  AND {dead_letter_refusal} IS NULL
  AND pg_try_advisory_xact_lock({job_id})
RETURNING o.id AS queuetop_given, {job_id}::text AS id, NULL::text AS new_token
