-- purpose: an Absurd run's state, with a failed run its task ran again (a later attempt of the same task exists: fail_run inserted it, or retry_task) told apart as retried from one that ended its task
CASE WHEN t.state = 'failed'
          AND EXISTS (SELECT 1 FROM {table} AS later
                      WHERE later.task_id = t.task_id AND later.attempt > t.attempt)
     THEN 'retried'
     ELSE t.state END
