-- purpose: the last error Oban appended to the job's errors list (attempt, at, error)
t.errors -> -1 ->> 'error'
