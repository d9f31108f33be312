-- purpose: why good_job forbids changing the job now: a worker's session holds its advisory lock (good_job's own retry, reschedule and discard take that lock and raise RecordAlreadyAdvisoryLockedError)
CASE WHEN {lock_held}
     THEN 'a good_job worker session (backend pid ' || {lock_holder} || ') holds its advisory '
          'lock: it is running'
END
