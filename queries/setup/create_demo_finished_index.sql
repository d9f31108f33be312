-- purpose: index for the latency's run times: the jobs finished in its window, by finish time (the rows not finished stay out)
CREATE INDEX IF NOT EXISTS jobs_finished_at_idx
    ON queuetop_demo.jobs (finished_at) WHERE finished_at IS NOT NULL
