-- purpose: the workflow's started_at_epoch_ms (DBOS keeps epoch milliseconds) as a timestamp
to_timestamp(t.started_at_epoch_ms / 1000.0)
