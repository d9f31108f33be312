-- purpose: good_job's discard_job, under each job's advisory lock (taken for this transaction: a job a live worker holds is left alone), only while still as observed and, unless forced, past its lease: finished now with GoodJob::Job::DiscardJobError and the reason (error_event 5, discarded)
UPDATE {table} AS t
SET finished_at = (now() AT TIME ZONE 'UTC'),
    error = 'GoodJob::Job::DiscardJobError: ' || %(reason)s::text,
    error_event = 5,
    updated_at = (now() AT TIME ZONE 'UTC')
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
  AND pg_try_advisory_xact_lock(('x' || substr(md5('good_jobs' || '-' || {job_id}::text), 1, 16))::bit(64)::bigint)
RETURNING o.id AS queuetop_given, {job_id}::text AS id, NULL::text AS new_token
