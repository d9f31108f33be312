-- purpose: why queuetop leaves a Solid Queue job to Solid Queue itself: a concurrency-limited job holds or waits for a semaphore that only Solid Queue's own retry, release and discard keep right
CASE WHEN t.concurrency_key IS NOT NULL
     THEN 'concurrency-limited (' || t.concurrency_key || '): its semaphore is Solid Queue''s '
          'to keep; use its own retry or discard (Mission Control)'
END
