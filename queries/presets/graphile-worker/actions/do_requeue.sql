-- purpose: requeue graphile-worker jobs still as observed (state, pool, locked_at) and, unless forced, whose pool is gone or whose lock outlived graphile-worker's 4 hours: a locked job freed as force_unlock_workers frees its pool's jobs (locked_at and locked_by cleared, its named queue unlocked; the killed run keeps its attempt), a retrying one rescheduled as reschedule_jobs does; due now, max_attempts raised past attempts where the last one was spent (else it would read permanently failed), then jobs:insert notified as add_job does so that idle pools claim it at once
WITH requeued AS (
    UPDATE {table} AS t
    SET locked_at = NULL,
        locked_by = NULL,
        run_at = now(),
        max_attempts = greatest(t.max_attempts, t.attempts + 1)::smallint,
        updated_at = now()
    FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token)
    WHERE {job_id} = o.id::{id_type}
      AND {guard}
    RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token,
              t.job_queue_id, o.worker AS old_pool
), unlocked AS (
    UPDATE {schema}._private_job_queues AS q
    SET locked_at = NULL,
        locked_by = NULL
    FROM requeued AS r
    WHERE q.id = r.job_queue_id AND q.locked_by = r.old_pool
)
SELECT r.queuetop_given, r.id, r.new_token
FROM requeued AS r
CROSS JOIN LATERAL pg_notify('jobs:insert', json_build_object('count', 1)::text) AS notified
