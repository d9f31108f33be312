-- purpose: the jobs a worker session holds right now (a stopped worker's job must expire and be rescued)
SELECT id, lease_token FROM queuetop_demo.jobs WHERE status = 'running' AND worker = %(worker)s
