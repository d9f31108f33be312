-- purpose: one job's state and lease token
SELECT status, lease_token FROM queuetop_demo.jobs WHERE id = %(id)s
