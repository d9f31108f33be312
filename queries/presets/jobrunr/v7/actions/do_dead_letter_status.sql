-- purpose: fail JobRunr jobs for good, still as observed (state, processing server, version) and, unless forced, not processing on a live server, where JobRunr's failure path ends: a FailedState appended to jobAsJson's history in the shape its Jackson mapper writes (doNotRetry, so its RetryFilter would not reschedule it; the reason as its exception message), state FAILED, updatedAt (the new state's time) and version written with it, the version inside jobAsJson too; scheduledAt cleared, as 6.x and 7.x save it only for a SCHEDULED job
UPDATE {table} AS t
SET state = 'FAILED',
    version = t.version + 1,
    updatedat = n.at,
    scheduledat = NULL,
    jobasjson = (jsonb_set(
        t.jobasjson::jsonb,
        ARRAY['jobHistory'],
        (t.jobasjson::jsonb -> 'jobHistory')
        || jsonb_build_array(jsonb_build_object(
            '@class', 'org.jobrunr.jobs.states.FailedState',
            'state', 'FAILED',
            'createdAt', n.at_text,
            'message', 'Failed for good by an operator (queuetop dead-letter)',
            'exceptionType', 'java.lang.IllegalStateException',
            'exceptionMessage', %(reason)s::text,
            'stackTrace', 'java.lang.IllegalStateException: ' || %(reason)s::text,
            'doNotRetry', true)))
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
