-- purpose: the queue of an Enqueued or Processing Hangfire job: its (latest) jobqueue row's, as Hangfire's Queues page counts it; other states are in no queue
CASE WHEN t.statename IN ('Enqueued', 'Processing')
     THEN (SELECT q.queue FROM {schema}.jobqueue AS q
           WHERE q.jobid = t.id ORDER BY q.id DESC LIMIT 1)
END
