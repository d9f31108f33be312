-- purpose: why a Solid Queue job cannot be dead-lettered: it already is a failed execution (Solid Queue's dead letters: retry or discard it there), or it is concurrency-limited (its semaphore is Solid Queue's to keep)
CASE
    WHEN t.concurrency_key IS NOT NULL
        THEN 'concurrency-limited (' || t.concurrency_key || '): its semaphore is Solid Queue''s '
             'to keep; use its own retry or discard (Mission Control)'
    WHEN t.finished_at IS NULL AND t.id IN (SELECT job_id FROM solid_queue_failed_executions)
        THEN 'already a failed execution: Solid Queue keeps it there to retry or discard'
END
