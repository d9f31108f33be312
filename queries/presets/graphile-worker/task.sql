-- purpose: the job's task identifier (graphile-worker's kind of job), the group its counts are shown by
(SELECT k.identifier FROM {schema}._private_tasks AS k WHERE k.id = t.task_id)
