-- purpose: when a pg-boss 10 job may run: start_after (pg-boss 10 has no flows, so nothing blocks a job)
t.start_after
