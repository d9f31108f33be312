-- purpose: when a running pg-boss job's claim runs out, as pg-boss's supervisor judges it: started_on + expire_seconds, or earlier its heartbeat_on + heartbeat_seconds where the job has a heartbeat (least() skips the NULL of a job without one)
least(t.started_on + make_interval(secs => t.expire_seconds),
      t.heartbeat_on + make_interval(secs => t.heartbeat_seconds))
