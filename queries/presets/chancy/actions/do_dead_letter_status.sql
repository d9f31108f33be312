-- purpose: fail chancy jobs still as observed (state, worker, claim_id) and, unless forced, not running on a live worker: what chancy's cancel_job does (failed, claim_id cleared so a late completion cannot overwrite it, completed_at), the operator's reason appended to errors, then job.cancelled on chancy's channel so that a running execution stops
WITH failed AS (
    UPDATE {table} AS t
    SET state = 'failed',
        claim_id = NULL,
        completed_at = now(),
        errors = t.errors || jsonb_build_array(jsonb_build_object(
            'traceback', %(reason)s::text, 'attempt', t.attempts))
    FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token)
    WHERE {job_id} = o.id::{id_type}
      AND {guard}
    RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token,
              (SELECT left(c.relname, -length('jobs')) || 'events'
               FROM pg_class AS c WHERE c.oid = t.tableoid) AS channel
)
SELECT f.queuetop_given, f.id, f.new_token
FROM failed AS f
CROSS JOIN LATERAL pg_notify(f.channel, jsonb_build_object('t', 'job.cancelled', 'j', f.id)::text)
    AS notified
