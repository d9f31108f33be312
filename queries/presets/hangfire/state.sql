-- purpose: a Hangfire job's state: job.statename (the name of its current state row, job.stateid), except a Scheduled state whose reason starts with 'Retry attempt' (case aside), the test AutomaticRetry itself applies (OnStateApplied) to a failure it will run again, which reads 'Scheduled (retry)'
CASE WHEN t.statename = 'Scheduled'
          AND EXISTS (SELECT 1 FROM {schema}."state" AS s
                      WHERE s.id = t.stateid AND starts_with(lower(s.reason), 'retry attempt'))
     THEN 'Scheduled (retry)'
     ELSE t.statename
END
