-- purpose: the deadlock scenario's completion: one job done, only while its lease token is the one this claim got
UPDATE queuetop_lab.jobs AS t
SET status = 'done', finished_at = now(), leased_until = NULL
WHERE t.id = %(id)s AND t.status = 'running' AND t.lease_token = %(token)s
RETURNING t.id
