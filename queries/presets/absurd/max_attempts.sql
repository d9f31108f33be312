-- purpose: how many attempts the run's task allows (its max_attempts; NULL: no limit)
(SELECT k.max_attempts FROM {tasks_table} AS k WHERE k.task_id = t.task_id)
