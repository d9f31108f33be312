-- purpose: when a running pg-boss 10 job's claim runs out, as its supervisor judges it (failJobsByTimeout): started_on + expire_in (pg-boss 10 has no heartbeat)
t.started_on + t.expire_in
