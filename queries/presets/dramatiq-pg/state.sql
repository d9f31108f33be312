-- purpose: a dramatiq-pg message's state: its state column (queued, consumed, done, rejected), except that a message of a delay queue (queue_name ending in .DQ, where dramatiq parks a message until its eta) waits: retrying when dramatiq's Retries middleware put it there (options.retries set), else delayed
CASE
    WHEN t.state = 'done' THEN 'done'
    WHEN t.state = 'rejected' THEN 'rejected'
    WHEN right(t.queue_name, 3) = '.DQ' THEN
        CASE WHEN (t.message -> 'options' ->> 'retries') IS NOT NULL THEN 'retrying' ELSE 'delayed' END
    WHEN t.state = 'consumed' THEN 'consumed'
    WHEN t.state = 'queued' THEN 'queued'
END
