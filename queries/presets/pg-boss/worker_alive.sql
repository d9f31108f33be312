-- purpose: whether the worker running a pg-boss job lives: its heartbeat (touched every heartbeat_seconds / 2 while the handler runs) is under heartbeat_seconds old; unknown for a job without a heartbeat (pg-boss records no worker on the job)
CASE WHEN t.heartbeat_seconds IS NULL OR t.heartbeat_on IS NULL THEN NULL
     ELSE t.heartbeat_on + make_interval(secs => t.heartbeat_seconds) > now() END
