-- purpose: Que's state of a job: que_determine_job_state (expired, finished, errored, scheduled, ready), with the running signal Que's own job_stats and job_states use put first for unfinished jobs: a session holds the advisory lock on its id (working)
CASE
    WHEN t.expired_at IS NOT NULL THEN 'expired'
    WHEN t.finished_at IS NOT NULL THEN 'finished'
    WHEN {lock_held} THEN 'working'
    WHEN t.error_count > 0 THEN 'errored'
    WHEN t.run_at > CURRENT_TIMESTAMP THEN 'scheduled'
    ELSE 'ready'
END
