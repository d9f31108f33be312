-- purpose: requeue JobRunr jobs still as observed (state, processing server, version) and, unless forced, past the orphan limit, as JobRunr's own state machine allows: a PROCESSING job first failed as its ProcessOrphanedJobsTask fails an orphan (PROCESSING may only go to FAILED), then, as for a FAILED or DELETED job, the EnqueuedState of its job.enqueue() appended to jobAsJson's history in the shape its Jackson mapper writes (a UTC Instant as text); state, updatedAt (the new state's time) and version written with it, the version inside jobAsJson too (its save checks that one), so its workers' claim takes the job; scheduledAt cleared, as 6.x and 7.x save it only for a SCHEDULED job (its orphan's exception: java.lang.IllegalThreadStateException)
UPDATE {table} AS t
SET state = 'ENQUEUED',
    version = t.version + 1,
    updatedat = n.at,
    scheduledat = NULL,
    jobasjson = (jsonb_set(
        t.jobasjson::jsonb,
        ARRAY['jobHistory'],
        (t.jobasjson::jsonb -> 'jobHistory')
        || CASE WHEN t.state = 'PROCESSING'
                THEN jsonb_build_array(jsonb_build_object(
                    '@class', 'org.jobrunr.jobs.states.FailedState',
                    'state', 'FAILED',
                    'createdAt', n.at_text,
                    'message', 'Orphaned job',
                    'exceptionType', 'java.lang.IllegalThreadStateException',
                    'exceptionMessage', 'Job was too long in PROCESSING state without being updated.',
                    'stackTrace', 'java.lang.IllegalThreadStateException: Job was too long in PROCESSING state without being updated. (requeued by queuetop)',
                    'doNotRetry', false))
                ELSE '[]'::jsonb END
        || jsonb_build_array(jsonb_build_object(
            '@class', 'org.jobrunr.jobs.states.EnqueuedState',
            'state', 'ENQUEUED',
            'createdAt', n.at_text)))
        || jsonb_build_object('version', t.version + 1))::text
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token),
     (SELECT a.at,
             to_char(a.at, 'YYYY-MM-DD"T"HH24:MI:SS')
             || CASE WHEN to_char(a.at, 'US') = '000000' THEN ''
                     WHEN right(to_char(a.at, 'US'), 3) = '000' THEN '.' || left(to_char(a.at, 'US'), 3)
                     ELSE '.' || to_char(a.at, 'US') END
             || 'Z' AS at_text
      FROM (SELECT now() AT TIME ZONE 'UTC' AS at) AS a) AS n
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token
