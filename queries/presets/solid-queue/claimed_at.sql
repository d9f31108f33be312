-- purpose: when Solid Queue's worker claimed the job: its claimed execution's created_at (UTC, as Rails writes it)
(SELECT c.created_at AT TIME ZONE 'UTC'
 FROM solid_queue_claimed_executions AS c WHERE c.job_id = t.id)
