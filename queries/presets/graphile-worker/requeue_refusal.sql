-- purpose: why graphile-worker forbids running the job again: while it ran, add_job replaced it (same job_key: a new job now carries the key) or remove_job removed it; both clear its key and spend its attempts, which a claim never does (updated_at after locked_at)
CASE WHEN t.locked_at IS NOT NULL AND t.key IS NULL AND t.attempts >= t.max_attempts
          AND t.updated_at > t.locked_at
     THEN 'graphile-worker: the job was replaced (add_job with its job_key) or removed '
          '(remove_job) while it ran, so it must not run again'
END
