-- purpose: why JobRunr forbids failing the job: its state machine (AllowedJobStateStateChanges) lets an AWAITING job go only to AWAITING, SCHEDULED, ENQUEUED or DELETED; and a job whose jobAsJson's last state is not its state column's is left alone, as for a requeue
CASE WHEN (t.jobasjson::jsonb -> 'jobHistory' -> (-1) ->> 'state') IS DISTINCT FROM t.state
     THEN 'JobRunr job ' || t.id::text || ': the last state in its jobAsJson is '
          || coalesce(t.jobasjson::jsonb -> 'jobHistory' -> (-1) ->> 'state', 'missing')
          || ' but its state column says ' || t.state
          || '; JobRunr''s workers read jobAsJson, so queuetop leaves the job alone'
     WHEN t.state = 'AWAITING'
     THEN 'JobRunr allows an AWAITING job no change to FAILED (AllowedJobStateStateChanges): '
          || 'enqueue, schedule or delete it instead'
END
