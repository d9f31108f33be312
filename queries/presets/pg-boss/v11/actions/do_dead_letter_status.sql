-- purpose: fail pg-boss 11 jobs for good, still as observed (state, retry_count) and, unless forced, not running on a live claim: what pg-boss 11 does to a job out of retries (failed, completed_on, the reason in output as value.message) including its copy into the job's dead_letter queue (settings from that queue, as its failJobs writes them)
WITH failed AS (
    UPDATE {table} AS t
    SET state = 'failed',
        completed_on = now(),
        output = jsonb_build_object('value', jsonb_build_object('message', %(reason)s::text))
    FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token)
    WHERE {job_id} = o.id::{id_type}
      AND {guard}
    RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token,
              t.name, t.data, t.output, t.dead_letter
), copied AS (
    INSERT INTO {table} (name, data, output, retry_limit, retry_backoff, retry_delay, keep_until,
                         deletion_seconds)
    SELECT f.dead_letter, f.data, f.output, q.retry_limit, q.retry_backoff, q.retry_delay,
           now() + make_interval(secs => q.retention_seconds), q.deletion_seconds
    FROM failed AS f
    JOIN {schema}.queue AS q ON q.name = f.dead_letter
)
SELECT f.queuetop_given, f.id, f.new_token
FROM failed AS f
