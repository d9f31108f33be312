-- purpose: the partial index every claim walks: ready jobs by priority, then id, as on the demo queue
CREATE INDEX jobs_ready_idx ON queuetop_lab.jobs (priority DESC, id) WHERE status = 'ready'
