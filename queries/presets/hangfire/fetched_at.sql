-- purpose: a Processing Hangfire job's claim: the latest fetchedat of its jobqueue rows (the fetch writes NOW(), the keep-alive of UseSlidingInvisibilityTimeout renews it); NULL while its row waits unfetched again; with no queue row at all (no fetch will ever take it), the time of its Processing state. Other states are read without touching jobqueue (a count reads every row)
CASE WHEN t.statename = 'Processing'
     THEN (SELECT CASE WHEN count(*) = 0
                       THEN (SELECT s.createdat FROM {schema}."state" AS s WHERE s.id = t.stateid)
                       ELSE max(q.fetchedat)
                  END
           FROM {schema}.jobqueue AS q
           WHERE q.jobid = t.id)
END
