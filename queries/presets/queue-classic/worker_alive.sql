-- purpose: whether the session that locked a job lives: locked_by is its backend pid (queue_classic's lock writes pg_backend_pid()); as QC.unlock_jobs_of_dead_workers decides, a pid no session has is a dead worker
CASE WHEN t.locked_by IS NULL THEN NULL
     ELSE EXISTS (SELECT 1 FROM pg_stat_activity AS a WHERE a.pid = t.locked_by)
END
