-- purpose: requeue procrastinate jobs as its own retry does (procrastinate_retry_job_v2: back to todo, attempts + 1, due now), only while they are still as observed (state, worker, attempts), unless forced past their worker's heartbeat, and not where procrastinate refuses
WITH guarded AS (
    SELECT o.id AS queuetop_given, {job_id} AS job_id, t.attempts
    FROM {table} AS t
    JOIN unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token) ON {job_id} = o.id::{id_type}
    WHERE {guard}
),
retried AS (
    SELECT g.queuetop_given, g.job_id, g.attempts,
           procrastinate_retry_job_v2(g.job_id, now(), NULL, NULL, NULL)::text AS outcome
    FROM guarded AS g
)
SELECT r.queuetop_given, r.job_id::text AS id, (r.attempts + 1)::text AS new_token
FROM retried AS r
