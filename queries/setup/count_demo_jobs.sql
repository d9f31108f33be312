-- purpose: how many jobs the demo queue holds (init-demo reports it)
SELECT count(*) FROM queuetop_demo.jobs
