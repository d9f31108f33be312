-- purpose: why pg-boss cannot fail the job: a key_strict_fifo queue keeps one job per singleton key that is active, in retry or failed, and another job of the key already is (the unique index would refuse it, as it refuses pg-boss's own fail())
(SELECT format('pg-boss key_strict_fifo queue %%s: job %%s with the same singleton key is %%s, '
               'and the queue allows one active, retry or failed job per key', t.name, o.id, o.state)
 FROM {table} AS o
 WHERE t.policy = 'key_strict_fifo' AND o.name = t.name AND o.policy = t.policy AND o.id <> t.id
   AND o.singleton_key = t.singleton_key AND o.state IN ('active', 'retry', 'failed')
 LIMIT 1)
