-- purpose: the run's task and its inputs (task_name, params), for the job's detail
(SELECT jsonb_build_object('task', k.task_name, 'params', k.params)
 FROM {tasks_table} AS k WHERE k.task_id = t.task_id)
