-- purpose: index for the latency's wait times: the jobs started in its window, by start time (the rows never started stay out)
CREATE INDEX IF NOT EXISTS jobs_started_at_idx
    ON queuetop_demo.jobs (started_at) WHERE started_at IS NOT NULL
