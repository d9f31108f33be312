-- purpose: requeue Oban jobs still as observed (state, producer, attempted_at) and, unless forced, whose producer stopped heartbeating: what Oban's Lifeline rescue does (available, meta.rescued + 1, attempted_by and attempted_at left for the next claim to overwrite), with max_attempts raised past attempt as Oban's retry_job does, since Oban never claims a job whose attempt has reached max_attempts
UPDATE {table} AS t
SET state = 'available',
    max_attempts = greatest(t.max_attempts, t.attempt + 1),
    completed_at = NULL,
    cancelled_at = NULL,
    discarded_at = NULL,
    meta = t.meta || jsonb_build_object('rescued', coalesce((t.meta ->> 'rescued')::int, 0) + 1)
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token
