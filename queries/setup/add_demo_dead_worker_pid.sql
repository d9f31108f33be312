-- purpose: the demo dead-letter table made before the worker_pid column gets it, as the queue did
ALTER TABLE queuetop_demo.jobs_dead ADD COLUMN IF NOT EXISTS worker_pid integer
