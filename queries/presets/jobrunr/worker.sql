-- purpose: the JobRunr server processing the job: the serverName (else serverId) of the ProcessingState that ends jobAsJson's history, which JobRunr's startProcessingOn appends; none for a job not processing
CASE WHEN t.state = 'PROCESSING'
     THEN coalesce(t.jobasjson::jsonb -> 'jobHistory' -> (-1) ->> 'serverName',
                   t.jobasjson::jsonb -> 'jobHistory' -> (-1) ->> 'serverId')
END
