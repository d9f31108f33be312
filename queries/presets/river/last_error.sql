-- purpose: River's last error of a job: the error text of the last entry of errors (jsonb[] of at, attempt, error, trace)
t.errors[array_upper(t.errors, 1)] ->> 'error'
