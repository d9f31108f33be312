-- purpose: why pgqueuer forbids dead-lettering this job, else NULL: a held failed job already is what a dead-letter makes of it
CASE WHEN t.status = 'failed'
     THEN 'already failed: pgqueuer holds it for an operator (requeue puts it back)'
END
