-- purpose: the workflow's created_at (DBOS keeps epoch milliseconds) as a timestamp
to_timestamp(t.created_at / 1000.0)
