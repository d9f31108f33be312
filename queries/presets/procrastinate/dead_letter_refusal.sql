-- purpose: why procrastinate forbids dead-lettering this job, else NULL: a failed job already is what a dead-letter makes of it (only procrastinate's retry takes a job out of failed)
CASE WHEN t.status = 'failed'
     THEN 'already failed: procrastinate keeps it so (requeue retries it)'
END
