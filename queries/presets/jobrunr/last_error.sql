-- purpose: why a JobRunr job failed: the exception message (else the message) of the FailedState that ends jobAsJson's history of a FAILED job
CASE WHEN t.state = 'FAILED'
     THEN coalesce(t.jobasjson::jsonb -> 'jobHistory' -> (-1) ->> 'exceptionMessage',
                   t.jobasjson::jsonb -> 'jobHistory' -> (-1) ->> 'message')
END
