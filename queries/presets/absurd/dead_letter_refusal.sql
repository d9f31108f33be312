-- purpose: why Absurd's fail path cannot end this run's task: a later attempt already runs it (the run was retried), or the task has ended (completed, failed or cancelled)
CASE WHEN EXISTS (SELECT 1 FROM {table} AS later
                  WHERE later.task_id = t.task_id AND later.attempt > t.attempt)
     THEN 'Absurd already runs this task again as a later attempt: dead-letter that run'
     ELSE (SELECT format('this run''s task is already %%s', k.state)
           FROM {tasks_table} AS k
           WHERE k.task_id = t.task_id AND k.state IN ('completed', 'failed', 'cancelled'))
END
