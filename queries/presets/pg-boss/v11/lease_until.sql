-- purpose: when a running pg-boss 11 job's claim runs out, as its supervisor judges it (failJobsByTimeout): started_on + expire_seconds (pg-boss 11 has no heartbeat)
t.started_on + make_interval(secs => t.expire_seconds)
