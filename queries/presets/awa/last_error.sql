-- purpose: the latest error awa appended to the job's errors (each attempt's {error, attempt, at})
(t.errors[array_upper(t.errors, 1)] ->> 'error')
