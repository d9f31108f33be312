-- purpose: why Absurd cannot run this run's task again: a later attempt already runs it (the run was retried), or the task is not failed where only a failed task can be retried (retry_task refuses a cancelled one)
CASE WHEN t.state = 'failed'
          AND EXISTS (SELECT 1 FROM {table} AS later
                      WHERE later.task_id = t.task_id AND later.attempt > t.attempt)
     THEN 'Absurd already runs this task again as a later attempt: requeue that run'
     WHEN t.state IN ('failed', 'cancelled')
     THEN (SELECT format('Absurd retries failed tasks only, and this run''s task is %%s', k.state)
           FROM {tasks_table} AS k WHERE k.task_id = t.task_id AND k.state <> 'failed')
END
