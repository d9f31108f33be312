-- purpose: Solid Queue's lease of a job: its claimed (or failed) execution row, which a new claim or failure replaces
coalesce((SELECT 'claim ' || c.id FROM solid_queue_claimed_executions AS c WHERE c.job_id = t.id),
         (SELECT 'failure ' || f.id FROM solid_queue_failed_executions AS f WHERE f.job_id = t.id))
