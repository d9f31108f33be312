-- purpose: the deadlock scenario: the two first ready jobs, read without locking; both of its workers then lock them, in opposite orders
SELECT t.id FROM queuetop_lab.jobs AS t
WHERE t.status = 'ready'
ORDER BY t.priority DESC, t.id
LIMIT 2
