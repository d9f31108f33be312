-- purpose: the worker that claimed the task: the last element of worker_ids (each claim appends its --worker-id)
(t.worker_ids ->> -1)
