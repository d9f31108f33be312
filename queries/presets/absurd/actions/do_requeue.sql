-- purpose: requeue Absurd runs still as observed (state, worker, claim time) and, unless forced, past their claim: what Absurd's claim does to an expired claim (fail_run with $ClaimTimeout: the run failed, its task run again as a new attempt, or failed for good where that was its last), then retry_task where the task ended failed (max_attempts raised past its attempts, as absurdctl retry-task does); a failed task's run goes straight to retry_task; the library's own functions, in its lock order (the run, then its task)
WITH chosen AS MATERIALIZED (
    SELECT o.id AS queuetop_given, t.run_id, t.task_id, t.state AS run_state, t.claimed_by,
           t.claim_expires_at, t.attempt, {lease_token}::text AS token
    FROM {table} AS t
    JOIN unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token) ON {job_id} = o.id::{id_type}
    WHERE {guard}
)
SELECT c.queuetop_given, c.run_id::text AS id, c.token AS new_token
FROM chosen AS c
LEFT JOIN LATERAL (
    SELECT {schema}.fail_run(
               {table_match}, g.run_id,
               jsonb_strip_nulls(jsonb_build_object(
                   'name', '$ClaimTimeout',
                   'message', 'worker did not finish task within claim interval (requeued by queuetop)',
                   'workerId', c.claimed_by,
                   'claimExpiredAt', c.claim_expires_at,
                   'attempt', c.attempt)),
               NULL::timestamptz)::text AS failed
    FROM (SELECT c.run_id WHERE c.run_state = 'running') AS g(run_id)
) AS f ON true
LEFT JOIN LATERAL (
    SELECT (SELECT r.run_id FROM {schema}.retry_task({table_match}, g.task_id) AS r) AS retry_run
    FROM (SELECT c.task_id
          WHERE f.failed IS NOT DISTINCT FROM f.failed
            AND (SELECT k.state FROM {schema}.get_task_result({table_match}, c.task_id) AS k)
                = 'failed') AS g(task_id)
) AS again ON true
