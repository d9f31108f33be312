-- purpose: good_job's own recovery, under each job's advisory lock (taken for this transaction, as good_job's admin actions take it: a job a live worker holds is left alone), only while still as observed and, unless forced, past its lease: a running job of a dead skiplocked process loses its lease as Process.cleanup does (performed_at kept: the next perform records the interruption), a retried job is rescheduled to now as reschedule_job does
UPDATE {table} AS t
SET locked_by_id = CASE WHEN o.status = 'running' THEN NULL ELSE t.locked_by_id END,
    locked_at = CASE WHEN o.status = 'running' THEN NULL ELSE t.locked_at END,
    scheduled_at = CASE WHEN o.status = 'running' THEN t.scheduled_at
                        ELSE (now() AT TIME ZONE 'UTC') END,
    updated_at = (now() AT TIME ZONE 'UTC')
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
  AND pg_try_advisory_xact_lock(('x' || substr(md5('good_jobs' || '-' || {job_id}::text), 1, 16))::bit(64)::bigint)
RETURNING o.id AS queuetop_given, {job_id}::text AS id, NULL::text AS new_token
