-- purpose: permanently fail graphile-worker jobs still as observed (state, pool, locked_at) and, unless forced, not locked by a live pool: what permanently_fail_jobs does (attempts = max_attempts, the reason in last_error, updated_at), plus the unlock it cannot do for a locked job (locked_at and locked_by cleared, its named queue unlocked, as force_unlock_workers does)
WITH failed AS (
    UPDATE {table} AS t
    SET attempts = t.max_attempts,
        last_error = %(reason)s::text,
        updated_at = now(),
        locked_at = NULL,
        locked_by = NULL
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
    FROM failed AS f
    WHERE q.id = f.job_queue_id AND q.locked_by = f.old_pool
)
SELECT f.queuetop_given, f.id, f.new_token
FROM failed AS f
