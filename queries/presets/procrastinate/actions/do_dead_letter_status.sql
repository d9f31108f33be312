-- purpose: dead-letter procrastinate jobs as its worker ends a job given up (procrastinate_finish_job_v1 to the dead-letter state: attempts + 1 if it was running, abort request cleared), only while they are still as observed (state, worker, attempts), unless forced past their worker's heartbeat, and not where procrastinate refuses
WITH guarded AS (
    SELECT o.id AS queuetop_given, {job_id} AS job_id, t.attempts, {state}::text AS was
    FROM {table} AS t
    JOIN unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token) ON {job_id} = o.id::{id_type}
    WHERE {guard}
),
finished AS (
    SELECT g.queuetop_given, g.job_id, g.attempts, g.was,
           procrastinate_finish_job_v1(g.job_id, %(to_status)s::text::procrastinate_job_status,
                                       false)::text AS outcome
    FROM guarded AS g
)
SELECT f.queuetop_given, f.job_id::text AS id,
       (f.attempts + CASE WHEN f.was = 'doing' THEN 1 ELSE 0 END)::text AS new_token
FROM finished AS f
