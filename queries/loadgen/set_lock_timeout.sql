-- purpose: a worker session's lock_timeout (the lab's lock_timeout scenario): a claim waiting longer for a row fails with lock_not_available
SELECT set_config('lock_timeout', %(value)s, false)
