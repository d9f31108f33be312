-- purpose: requeue chancy jobs still as observed (state, worker, claim_id) and, unless forced, whose worker stopped heartbeating: what chancy's Recovery plugin does (pending, taken_by, claim_id and started_at cleared, max_attempts + 1; the cleared claim_id fences the old execution's late updates), then job.recovered on chancy's channel so that a still-running old execution is cancelled
WITH requeued AS (
    UPDATE {table} AS t
    SET state = 'pending',
        taken_by = NULL,
        claim_id = NULL,
        started_at = NULL,
        max_attempts = t.max_attempts + 1
    FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token)
    WHERE {job_id} = o.id::{id_type}
      AND {guard}
    RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token,
              o.lease_token AS old_claim,
              (SELECT left(c.relname, -length('jobs')) || 'events'
               FROM pg_class AS c WHERE c.oid = t.tableoid) AS channel
)
SELECT r.queuetop_given, r.id, r.new_token
FROM requeued AS r
CROSS JOIN LATERAL pg_notify(r.channel, jsonb_build_object(
    't', 'job.recovered', 'j', r.id, 'c', r.old_claim)::text) AS notified
