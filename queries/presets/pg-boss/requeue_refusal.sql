-- purpose: why pg-boss cannot take the job back to retry: a stately queue keeps one job per singleton key in each state before active, and another job of the key already waits in retry (the unique index would refuse it; pg-boss's own fail path fails such a job for good instead)
(SELECT format('pg-boss stately queue %%s: job %%s with the same singleton key already waits in retry',
               t.name, o.id)
 FROM {table} AS o
 WHERE t.policy = 'stately' AND o.name = t.name AND o.policy = t.policy AND o.id <> t.id
   AND o.state = 'retry' AND coalesce(o.singleton_key, '') = coalesce(t.singleton_key, '')
 LIMIT 1)
