-- purpose: Hangfire's requeue (the dashboard's ChangeState to Enqueued, as its state machine applies it), only while the jobs are still as observed (state, server, state row and fetch) and, unless forced, past their claim: the job's jobqueue rows (a dead worker's fetched one among them) replaced by one new row in its queue, as the Enqueued handler's AddToQueue adds it; an Enqueued state row and job.stateid/statename in step (SetJobState), expireat cleared (PersistJob); its schedule and retries set entries removed (the Scheduled handler's and AutomaticRetry's unapply); stats:deleted decremented for a Deleted job (the Deleted handler's unapply)
WITH target AS (
    SELECT o.id AS given, t.id, t.statename,
           CASE WHEN left(t.invocationdata::text, 1) = '{{' THEN t.invocationdata::jsonb END
               AS invocation
    FROM {table} AS t
    JOIN unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token) ON {job_id} = o.id::{id_type}
    WHERE {guard}
),
dequeued AS (
    DELETE FROM {schema}.jobqueue AS q USING target
    WHERE q.jobid = target.id
    RETURNING q.id, q.jobid, q.queue
),
placed AS (
    SELECT target.id,
           coalesce((SELECT d.queue FROM dequeued AS d
                     WHERE d.jobid = target.id ORDER BY d.id DESC LIMIT 1),
                    target.invocation ->> 'Queue',
                    target.invocation ->> 'q',
                    (SELECT s.data::jsonb ->> 'Queue' FROM {schema}."state" AS s
                     WHERE s.jobid = target.id AND s.name = 'Enqueued'
                     ORDER BY s.id DESC LIMIT 1),
                    'default') AS queue
    FROM target
),
queued AS (
    INSERT INTO {schema}.jobqueue (jobid, queue)
    SELECT placed.id, placed.queue FROM placed
    RETURNING jobid
),
enqueued AS (
    INSERT INTO {schema}."state" (jobid, name, reason, createdat, data)
    SELECT placed.id, 'Enqueued', 'Requeued by queuetop', now(),
           jsonb_build_object(
               'EnqueuedAt',
               to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '0Z',
               'Queue', placed.queue)
    FROM placed
    RETURNING id, jobid
),
unscheduled AS (
    DELETE FROM {schema}."set" AS s USING target
    WHERE (s."key" = 'schedule'
           AND (s."value" = target.id::text
                OR right(s."value", length(target.id::text) + 1) = ':' || target.id))
       OR (s."key" = 'retries' AND s."value" = target.id::text)
    RETURNING s.id
),
uncounted AS (
    INSERT INTO {schema}.counter ("key", "value")
    SELECT 'stats:deleted', -1 FROM target WHERE target.statename = 'Deleted'
    RETURNING id
),
moved AS (
    UPDATE {table} AS j
    SET stateid = e.id, statename = 'Enqueued', expireat = NULL
    FROM enqueued AS e
    WHERE j.id = e.jobid
    RETURNING j.id
)
SELECT target.given AS queuetop_given, target.id::text AS id, NULL::text AS new_token
FROM target
WHERE target.id IN (SELECT moved.id FROM moved)
  AND target.id IN (SELECT queued.jobid FROM queued)
