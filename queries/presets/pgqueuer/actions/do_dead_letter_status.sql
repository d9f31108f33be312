-- purpose: dead-letter pgqueuer jobs as the library holds a job given up (status failed, queue_manager_id cleared) and log it with the reason as its traceback record; only while still as observed (state, worker, heartbeat), unless forced past the heartbeat timeout, and not where pgqueuer refuses
WITH held AS (
    UPDATE {table} AS t
    SET status = %(to_status)s::{status_type},
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
    SELECT h.job_id, %(to_status)s::{status_type}, h.entrypoint, h.priority,
           jsonb_build_object('job_id', h.job_id, 'timestamp', now(),
                              'exception_type', 'DeadLettered',
                              'exception_message', %(reason)s::text, 'traceback', '',
                              'additional_context',
                              jsonb_build_object('by', %(actor)s::text, 'tool', 'queuetop'))
    FROM held AS h
)
SELECT h.queuetop_given, h.job_id::text AS id, NULL::text AS new_token
FROM held AS h
