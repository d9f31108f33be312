-- purpose: when a JobRunr job started processing: the createdAt (a UTC Instant) of the ProcessingState that ends jobAsJson's history; none for a job not processing
CASE WHEN t.state = 'PROCESSING'
     THEN (t.jobasjson::jsonb -> 'jobHistory' -> (-1) ->> 'createdAt')::timestamptz
END
