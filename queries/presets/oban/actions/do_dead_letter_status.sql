-- purpose: discard Oban jobs still as observed (state, producer, attempted_at) and, unless forced, not running on a live producer: what Oban does to a job that has failed for good (discarded, discarded_at, an entry of attempt, at and error appended to errors, here with the operator's reason)
UPDATE {table} AS t
SET state = 'discarded',
    discarded_at = timezone('UTC', now()),
    errors = t.errors || jsonb_build_array(jsonb_build_object(
        'attempt', t.attempt,
        'at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"'),
        'error', %(reason)s::text))
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token
