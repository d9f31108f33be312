-- purpose: the deadlock scenario's claim: lease one named job if it is still ready (waits for the row when another transaction holds it)
UPDATE queuetop_lab.jobs AS t
SET status = 'running', worker = %(worker)s, worker_pid = pg_backend_pid(),
    lease_token = t.lease_token + 1,
    attempts = t.attempts + 1, started_at = now(),
    leased_until = now() + make_interval(secs => %(lease_s)s)
WHERE t.id = %(id)s AND t.status = 'ready'
RETURNING t.id, t.lease_token
