-- purpose: fail Absurd runs for good, still as observed (state, worker, claim time) and, unless forced, not on a live claim: what Absurd's fail_run writes when the task has no attempt left (the run failed with failed_at and the reason in failure_reason, wake_event cleared; its task failed, attempts and last_attempt_run recorded; the run's event waits deleted), in its lock order (the run, then its task)
WITH chosen AS MATERIALIZED (
    SELECT o.id AS queuetop_given, t.run_id, t.task_id, t.attempt, {lease_token}::text AS token
    FROM {table} AS t
    JOIN unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token) ON {job_id} = o.id::{id_type}
    WHERE {guard}
), run_failed AS (
    UPDATE {table} AS r
    SET state = 'failed',
        wake_event = NULL,
        failed_at = {schema}.current_time(),
        failure_reason = jsonb_build_object('name', 'DeadLettered', 'message', %(reason)s::text,
                                            'by', %(actor)s::text)
    FROM chosen AS c
    WHERE r.run_id = c.run_id
    RETURNING r.run_id
), task_failed AS (
    UPDATE {tasks_table} AS k
    SET state = 'failed',
        attempts = greatest(k.attempts, c.attempt),
        last_attempt_run = c.run_id
    FROM chosen AS c
    WHERE k.task_id = c.task_id
    RETURNING k.task_id
), waits_gone AS (
    DELETE FROM {waits_table} AS w
    USING chosen AS c
    WHERE w.run_id = c.run_id
    RETURNING w.run_id
)
SELECT c.queuetop_given, c.run_id::text AS id, c.token AS new_token
FROM chosen AS c
