-- purpose: Solid Queue's error of a failed job: its failed execution's error (JSON text: exception_class, message, backtrace)
(SELECT f.error FROM solid_queue_failed_executions AS f WHERE f.job_id = t.id)
