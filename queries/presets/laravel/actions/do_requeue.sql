-- purpose: requeue Laravel jobs still as observed (state, reservation) and, unless forced, past stale_after: the reservation cleared, so DatabaseQueue's claim takes the job as available at once (attempts kept, as its release keeps them)
UPDATE {table} AS t
SET reserved_at = NULL,
    available_at = least(t.available_at, extract(epoch FROM now())::int)
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token
