-- purpose: fail pg-boss 10 jobs for good, still as observed (state, retry_count) and, unless forced, not running on a live claim: what pg-boss 10 does to a job out of retries (failed, completed_on, the reason in output as value.message) including its copy into the job's dead_letter queue (name, data, output, retry_limit, keep_until as its failJobs writes them)
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
              t.name, t.data, t.output, t.retry_limit, t.keep_until, t.start_after, t.dead_letter
), copied AS (
    INSERT INTO {table} (name, data, output, retry_limit, keep_until)
    SELECT f.dead_letter, f.data, f.output, f.retry_limit, f.keep_until + (f.keep_until - f.start_after)
    FROM failed AS f
    WHERE f.dead_letter IS NOT NULL AND f.dead_letter <> f.name
)
SELECT f.queuetop_given, f.id, f.new_token
FROM failed AS f
