-- purpose: the rescuer: jobs still as observed (running, same worker and lease token) and still past their lease go back to ready, or to the terminal state after max_attempts; the token advances so a late completion by the old owner changes nothing
UPDATE {table} AS t
SET {status} = CASE WHEN coalesce({attempts}, 0) >= %(max_attempts)s
                    THEN %(terminal)s::{status_type}
                    ELSE %(ready)s::{status_type} END{requeue_set}
FROM unnest(%(ids)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND t.{status} = %(running)s::{status_type}
  AND {worker}::text IS NOT DISTINCT FROM o.worker
  AND {lease_token}::text IS NOT DISTINCT FROM o.lease_token
  AND coalesce({lease_until}, {started_at} + make_interval(secs => %(stale_after_s)s)) < now()
RETURNING o.id AS id, t.{status}::text AS status, {lease_token}::text AS new_token
