-- purpose: partial index the claim query walks: ready jobs by priority, then age
CREATE INDEX IF NOT EXISTS jobs_ready_idx
    ON queuetop_demo.jobs (priority DESC, id) WHERE status = 'ready'
