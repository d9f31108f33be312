-- purpose: the message's queue as dramatiq names it (q_name): a delay queue's name without its .DQ suffix
CASE WHEN right(t.queue_name, 3) IN ('.DQ', '.XQ') THEN left(t.queue_name, -3) ELSE t.queue_name END
