-- purpose: partial index for the stale-lease scan: running jobs by lease expiry
CREATE INDEX IF NOT EXISTS jobs_running_idx
    ON queuetop_demo.jobs (leased_until) WHERE status = 'running'
