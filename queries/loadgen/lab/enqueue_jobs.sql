-- purpose: fill the lab's queue with N ready jobs before a cell starts
INSERT INTO queuetop_lab.jobs (status, payload)
SELECT 'ready', repeat('x', 64) FROM generate_series(1, %(n)s)
