-- purpose: when a delayed DBOS workflow becomes ENQUEUED: delay_until_epoch_ms (epoch milliseconds) as a timestamp
to_timestamp(t.delay_until_epoch_ms / 1000.0)
