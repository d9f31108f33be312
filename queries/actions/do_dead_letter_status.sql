-- purpose: dead-letter jobs in place (state set to the dead value, reason into last_error) only while they are still as observed and, unless forced, past their lease
UPDATE {table} AS t
SET {assignments}
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE t.{id} = o.id::{id_type}
  AND {state}::text = o.status
  AND o.status = ANY (%(from_values)s::text[])
  AND {worker}::text IS NOT DISTINCT FROM o.worker
  AND {lease_token}::text IS NOT DISTINCT FROM o.lease_token
  AND {dead_letter_refusal} IS NULL
  AND (%(force)s
       OR o.status <> ALL (%(running_values)s::text[])
       OR {is_stale})
RETURNING o.id AS queuetop_given, t.{id}::text AS id, {lease_token}::text AS new_token
