-- purpose: Hangfire's failure path, where it ends once AutomaticRetry's attempts are spent, only while the jobs are still as observed and, unless forced, past their claim: a Failed state row as its worker writes it (FailedAt, ExceptionType, ExceptionMessage, ExceptionDetails; the operator's reason as the message) with job.stateid/statename in step and expireat cleared (Failed is not final: it waits for a person's requeue or delete), the job's jobqueue rows removed (the worker's RemoveFromQueue), its schedule, retries and awaiting set entries removed (the old state's unapply), and stats:failed counted for the day and the hour (StatisticsHistoryAttribute)
WITH target AS (
    SELECT o.id AS given, t.id
    FROM {table} AS t
    JOIN unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token) ON {job_id} = o.id::{id_type}
    WHERE {guard}
),
dequeued AS (
    DELETE FROM {schema}.jobqueue AS q USING target
    WHERE q.jobid = target.id
    RETURNING q.jobid
),
failed AS (
    INSERT INTO {schema}."state" (jobid, name, reason, createdat, data)
    SELECT target.id, 'Failed', 'Dead-lettered by queuetop', now(),
           jsonb_build_object(
               'FailedAt',
               to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '0Z',
               'ExceptionType', 'Queuetop.DeadLetteredException',
               'ExceptionMessage', %(reason)s::text,
               'ExceptionDetails', 'Queuetop.DeadLetteredException: ' || %(reason)s::text)
    FROM target
    RETURNING id, jobid
),
unscheduled AS (
    DELETE FROM {schema}."set" AS s USING target
    WHERE (s."key" = 'schedule'
           AND (s."value" = target.id::text
                OR right(s."value", length(target.id::text) + 1) = ':' || target.id))
       OR (s."key" IN ('retries', 'awaiting') AND s."value" = target.id::text)
    RETURNING s.id
),
counted AS (
    INSERT INTO {schema}.counter ("key", "value", expireat)
    SELECT 'stats:failed:' || to_char(now() AT TIME ZONE 'UTC', k.format), 1, now() + k.ttl
    FROM target
    CROSS JOIN (VALUES ('YYYY-MM-DD', interval '1 month'),
                       ('YYYY-MM-DD-HH24', interval '1 day')) AS k(format, ttl)
    RETURNING id
),
moved AS (
    UPDATE {table} AS j
    SET stateid = f.id, statename = 'Failed', expireat = NULL
    FROM failed AS f
    WHERE j.id = f.jobid
    RETURNING j.id
)
SELECT target.given AS queuetop_given, target.id::text AS id, NULL::text AS new_token
FROM target
WHERE target.id IN (SELECT moved.id FROM moved)
