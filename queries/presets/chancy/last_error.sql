-- purpose: the last error chancy appended to the job's errors list (traceback, attempt)
t.errors -> -1 ->> 'traceback'
