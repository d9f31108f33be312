-- purpose: good_job's advisory lock key of a job (hash_function md5 of '<table name>-<id>', as its advisory_lockable does), which the worker's session holds while it performs the job under the default advisory strategy; NULL under the skiplocked and hybrid strategies (lock_type 1, 2), whose lease is locked_by_id, kept alive by the process's heartbeat
CASE WHEN t.lock_type IN (1, 2) THEN NULL
     ELSE ('x' || substr(md5('good_jobs' || '-' || t.id::text), 1, 16))::bit(64)::bigint
END
