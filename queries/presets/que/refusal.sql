-- purpose: why Que forbids changing the job now: a locker session holds the advisory lock on its id, so a live worker runs it and will still destroy, finish or retry it (ending that session releases every job it holds)
CASE WHEN {lock_held}
     THEN 'a Que locker (backend pid ' || {lock_holder} || ') holds its advisory lock: it is '
          'running; ending that session (queuetop terminate) releases it'
END
