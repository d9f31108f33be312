-- purpose: fail pg-boss jobs for good, still as observed (state, retry_count) and, unless forced, not running on a live claim: what pg-boss does to a job out of retries (failed, completed_on, heartbeat_on cleared, the reason in output as value.message, as its own timeouts write it) including its copy into the queue's dead_letter queue (source_* naming this job, settings from that queue)
WITH failed AS (
    UPDATE {table} AS t
    SET state = 'failed',
        completed_on = now(),
        heartbeat_on = NULL,
        output = jsonb_build_object('value', jsonb_build_object('message', %(reason)s::text))
    FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token)
    WHERE {job_id} = o.id::{id_type}
      AND {guard}
    RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token,
              t.id AS job_id, t.name, t.priority, t.data, t.dead_letter, t.singleton_key,
              t.group_id, t.group_tier, t.created_on, t.retry_count, t.output, t.source_root_id,
              t.trace_context
), copied AS (
    INSERT INTO {table} (name, priority, data, retry_limit, retry_backoff, retry_delay,
                         start_after, created_on, keep_until, deletion_seconds, expire_seconds,
                         singleton_key, group_id, group_tier, heartbeat_seconds, source_name,
                         source_id, source_created_on, source_retry_count, source_output,
                         source_root_id, trace_context)
    SELECT f.dead_letter, f.priority, f.data, q.retry_limit, q.retry_backoff, q.retry_delay,
           now(), now(), now() + make_interval(secs => q.retention_seconds), q.deletion_seconds,
           q.expire_seconds, f.singleton_key, f.group_id, f.group_tier, q.heartbeat_seconds,
           f.name, f.job_id, f.created_on, f.retry_count, f.output,
           coalesce(f.source_root_id, f.job_id), f.trace_context
    FROM failed AS f
    JOIN {schema}.queue AS q ON q.name = f.dead_letter
)
SELECT f.queuetop_given, f.id, f.new_token
FROM failed AS f
