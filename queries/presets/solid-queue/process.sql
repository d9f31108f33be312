-- purpose: Solid Queue's worker of a claimed job: the process_id of its claimed execution (solid_queue_processes.id)
(SELECT c.process_id::text FROM solid_queue_claimed_executions AS c WHERE c.job_id = t.id)
