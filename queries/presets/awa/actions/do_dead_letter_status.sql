-- purpose: fail awa jobs for good, only while still as observed (state, run_lease) and, unless forced, not running on a live heartbeat: what awa's worker writes on a terminal failure (failed, finalized_at, the reason appended to errors with terminal = true; awa-worker executor.rs, awa 0.6); run_lease is kept, so a late write of the old attempt (state running, its run_lease) matches nothing
UPDATE {table} AS t
SET state = 'failed',
    finalized_at = now(),
    errors = coalesce(t.errors, '{{}}'::jsonb[]) || jsonb_build_object(
        'error', %(reason)s::text,
        'attempt', t.attempt,
        'at', now(),
        'terminal', true)
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token
