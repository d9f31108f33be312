-- purpose: when a pg-boss 11 job may run: start_after (pg-boss 11 has no flows, so nothing blocks a job)
t.start_after
