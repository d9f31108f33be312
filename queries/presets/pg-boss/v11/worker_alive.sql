-- purpose: whether the worker running a pg-boss 11 job lives: unknown, as pg-boss 11 records neither a heartbeat nor a worker on the job (its claim's expiry alone decides)
NULL::boolean
