-- purpose: a demo queue made before the worker_pid column gets it (nullable, no default: no rewrite)
ALTER TABLE queuetop_demo.jobs ADD COLUMN IF NOT EXISTS worker_pid integer
