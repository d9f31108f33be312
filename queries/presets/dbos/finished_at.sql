-- purpose: when the workflow ended: its completed_at (DBOS keeps epoch milliseconds) as a timestamp
to_timestamp(t.completed_at / 1000.0)
