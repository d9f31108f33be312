-- purpose: fresh planner statistics for the lab's queue once it is filled, so every cell's claims get the same plan
ANALYZE queuetop_lab.jobs
