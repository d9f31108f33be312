-- purpose: how many runs pg-boss allows the job: the first one and retry_limit retries
t.retry_limit + 1
