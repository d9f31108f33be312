-- purpose: Solid Queue's failure of a job, as it fails a pruned process's claims, only while the jobs are still as observed and, unless forced, past their process's heartbeat: its execution row (claimed, ready or scheduled) is deleted and a failed execution recorded, with SolidQueue::Processes::ProcessPrunedError for a claim (else Queuetop::DeadLettered) and the reason as its message; retry or discard it from there
WITH target AS (
    SELECT o.id AS given, {job_id} AS id, {state} AS state
    FROM {table} AS t
    JOIN unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token) ON {job_id} = o.id::{id_type}
    WHERE {guard}
),
claims AS (
    DELETE FROM solid_queue_claimed_executions AS c USING target
    WHERE c.job_id = target.id AND target.state = 'claimed'
    RETURNING c.job_id
),
ready AS (
    DELETE FROM solid_queue_ready_executions AS r USING target
    WHERE r.job_id = target.id AND target.state = 'ready'
    RETURNING r.job_id
),
later AS (
    DELETE FROM solid_queue_scheduled_executions AS s USING target
    WHERE s.job_id = target.id AND target.state = 'scheduled'
    RETURNING s.job_id
),
failed AS (
    INSERT INTO solid_queue_failed_executions (job_id, error, created_at)
    SELECT gone.job_id,
           json_build_object('exception_class', gone.exception_class,
                             'message', %(reason)s::text, 'backtrace', json_build_array())::text,
           (now() AT TIME ZONE 'UTC')
    FROM (SELECT job_id, 'SolidQueue::Processes::ProcessPrunedError' AS exception_class
          FROM claims
          UNION ALL
          SELECT job_id, 'Queuetop::DeadLettered' FROM ready
          UNION ALL
          SELECT job_id, 'Queuetop::DeadLettered' FROM later) AS gone
    RETURNING job_id
)
SELECT target.given AS queuetop_given, target.id::text AS id, NULL::text AS new_token
FROM target
WHERE target.id IN (SELECT job_id FROM failed)
