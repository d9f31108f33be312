-- purpose: Solid Queue's FailedExecution#retry, only while the jobs are still as observed (state, process, execution row) and, unless forced, past their process's heartbeat: the failed execution (or a dead process's claim, which Solid Queue would fail first) is deleted, the job's execution counters reset (arguments executions 0, exception_executions empty) and the job dispatched again: ready when due, else scheduled
WITH target AS (
    SELECT o.id AS given, {job_id} AS id, {state} AS state
    FROM {table} AS t
    JOIN unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token) ON {job_id} = o.id::{id_type}
    WHERE {guard}
),
released AS (
    DELETE FROM solid_queue_claimed_executions AS c USING target
    WHERE c.job_id = target.id AND target.state = 'claimed'
    RETURNING c.job_id
),
retried AS (
    DELETE FROM solid_queue_failed_executions AS f USING target
    WHERE f.job_id = target.id AND target.state = 'failed'
    RETURNING f.job_id
),
reset AS (
    UPDATE {table} AS t
    SET arguments = jsonb_set(jsonb_set(t.arguments::jsonb, ARRAY['executions'], to_jsonb(0)),
                              ARRAY['exception_executions'], jsonb_build_object())::text,
        updated_at = (now() AT TIME ZONE 'UTC')
    WHERE {job_id} IN (SELECT job_id FROM released UNION ALL SELECT job_id FROM retried)
    RETURNING {job_id} AS id, t.queue_name, t.priority, t.scheduled_at
),
ready AS (
    INSERT INTO solid_queue_ready_executions (job_id, queue_name, priority, created_at)
    SELECT id, queue_name, priority, (now() AT TIME ZONE 'UTC') FROM reset
    WHERE scheduled_at IS NULL OR scheduled_at <= (now() AT TIME ZONE 'UTC')
    RETURNING job_id
),
later AS (
    INSERT INTO solid_queue_scheduled_executions (job_id, queue_name, priority, scheduled_at,
                                                  created_at)
    SELECT id, queue_name, priority, scheduled_at, (now() AT TIME ZONE 'UTC') FROM reset
    WHERE scheduled_at > (now() AT TIME ZONE 'UTC')
    RETURNING job_id
)
SELECT target.given AS queuetop_given, target.id::text AS id, NULL::text AS new_token
FROM target
WHERE target.id IN (SELECT job_id FROM ready UNION ALL SELECT job_id FROM later)
