-- purpose: whether the worker running a pg-boss 10 job lives: unknown, as pg-boss 10 records neither a heartbeat nor a worker on the job (its claim's expiry alone decides)
NULL::boolean
