-- purpose: requeue awa jobs only while still as observed (state, run_lease) and, unless forced, past their heartbeat or deadline: a running job as awa's heartbeat rescue and then its promoter leave it (available, due now, heartbeat, deadline and callback cleared, finalized_at stamped, the reason appended to errors), a failed or cancelled one as its admin retry does (available, attempt 0, due now); run_lease is kept: the next claim advances it (awa-worker maintenance.rs rescue_canonical_stale_heartbeats and promote_sql, awa-model admin.rs retry, awa 0.6)
UPDATE {table} AS t
SET state = 'available',
    attempt = CASE WHEN t.state = 'running' THEN t.attempt ELSE 0 END,
    run_at = now(),
    heartbeat_at = NULL,
    deadline_at = NULL,
    finalized_at = CASE WHEN t.state = 'running' THEN now() END,
    errors = CASE WHEN t.state = 'running'
                  THEN coalesce(t.errors, '{{}}'::jsonb[]) || jsonb_build_object(
                      'error', 'rescued by queuetop requeue: worker presumed dead',
                      'attempt', t.attempt,
                      'at', now())
                  ELSE t.errors END,
    callback_id = NULL,
    callback_timeout_at = NULL,
    callback_filter = NULL,
    callback_on_complete = NULL,
    callback_on_fail = NULL,
    callback_transform = NULL
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token
