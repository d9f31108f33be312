-- purpose: dead-letter jobs in place (state set to the dead value, reason into last_error) only while they are still as observed and, unless forced, past their lease
UPDATE {table} AS t
SET {assignments}
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token
