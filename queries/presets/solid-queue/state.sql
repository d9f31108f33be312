-- purpose: Solid Queue's status of a job (Job#status): finished when finished_at is set, else the execution table that holds it; uncorrelated, so each execution table is read once per statement and hashed
CASE
    WHEN t.finished_at IS NOT NULL THEN 'finished'
    WHEN t.id IN (SELECT job_id FROM solid_queue_claimed_executions) THEN 'claimed'
    WHEN t.id IN (SELECT job_id FROM solid_queue_failed_executions) THEN 'failed'
    WHEN t.id IN (SELECT job_id FROM solid_queue_ready_executions) THEN 'ready'
    WHEN t.id IN (SELECT job_id FROM solid_queue_scheduled_executions) THEN 'scheduled'
    WHEN t.id IN (SELECT job_id FROM solid_queue_blocked_executions) THEN 'blocked'
    ELSE 'no execution'
END
