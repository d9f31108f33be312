-- purpose: the run's result from the ground truth: jobs produced, their final states, jobs completed more than once, jobs gone from both tables, and the rescues and fenced claims seen
WITH produced AS (
    SELECT DISTINCT job_id FROM chaos.transitions WHERE old_status IS NULL
), done_twice AS (
    SELECT job_id FROM chaos.transitions
    WHERE new_status = 'done' GROUP BY job_id HAVING count(*) > 1
), final AS (
    SELECT p.job_id, j.status
    FROM produced AS p
    LEFT JOIN queuetop_demo.jobs AS j ON j.id = p.job_id
)
SELECT (SELECT count(*) FROM produced) AS produced,
       (SELECT count(*) FROM final WHERE status = 'done') AS done,
       (SELECT count(*) FROM final WHERE status = 'dead') AS dead,
       (SELECT count(*) FROM final WHERE status IS DISTINCT FROM 'done'
                                     AND status IS DISTINCT FROM 'dead') AS lost,
       (SELECT count(*) FROM done_twice) AS done_twice,
       (SELECT count(*) FROM chaos.transitions
        WHERE old_status = 'running' AND new_status IN ('ready', 'dead')
          AND actor = 'queuetop-rescuer') AS rescued,
       (SELECT count(*) FROM chaos.transitions WHERE old_status = 'running'
          AND new_status = 'running') AS reclaimed_while_running,
       (SELECT count(*) FROM chaos.transitions) AS transitions
