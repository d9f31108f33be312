-- purpose: requeue pgqueuer jobs as the library does: a picked job as its retry (queued, due now, attempts + 1), a held failed job as `pgq requeue` (queued, due now, attempts 0); both clear queue_manager_id (its concurrency limits count every row that has one) and log 'queued'; only while still as observed (state, worker, heartbeat), unless forced past the heartbeat timeout, and not where pgqueuer refuses
WITH requeued AS (
    UPDATE {table} AS t
    SET status = 'queued',
        execute_after = now(),
        attempts = CASE WHEN t.status = 'failed' THEN 0 ELSE t.attempts + 1 END,
        updated = now(),
        queue_manager_id = NULL
    FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token)
    WHERE {job_id} = o.id::{id_type}
      AND {guard}
    RETURNING o.id AS queuetop_given, {job_id} AS job_id, t.entrypoint, t.priority
),
logged AS (
    INSERT INTO {history_table} (job_id, {history_status}, entrypoint, priority, traceback)
    SELECT r.job_id, 'queued', r.entrypoint, r.priority, NULL
    FROM requeued AS r
)
SELECT r.queuetop_given, r.job_id::text AS id, NULL::text AS new_token
FROM requeued AS r
