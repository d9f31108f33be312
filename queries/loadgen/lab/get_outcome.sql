-- purpose: a lab cell's result from the table and the trigger's log, once every worker stopped: jobs left running with no owner (lost), jobs missing from the table, jobs done more than once, claims of a job already running
WITH produced AS (
    SELECT DISTINCT job_id FROM queuetop_lab.transitions WHERE old_status IS NULL
)
SELECT (SELECT count(*) FROM queuetop_lab.jobs WHERE status = 'running')
       + (SELECT count(*) FROM produced AS p
          WHERE NOT EXISTS (SELECT FROM queuetop_lab.jobs AS j WHERE j.id = p.job_id)) AS lost,
       (SELECT count(*) FROM (
            SELECT job_id FROM queuetop_lab.transitions
            WHERE new_status = 'done' GROUP BY job_id HAVING count(*) > 1) AS twice)
       + (SELECT count(*) FROM queuetop_lab.transitions
          WHERE old_status = 'running' AND new_status = 'running') AS double_claims,
       (SELECT count(*) FROM queuetop_lab.jobs WHERE status = 'done') AS done
