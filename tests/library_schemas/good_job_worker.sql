-- The statements tests/emulated_workers runs to emulate this library's worker (a subset).
-- good_job 4.19.2 worker SQL, reconstructed from the ActiveRecord code that emits it
-- (app/models/good_job/job.rb, job/lockable.rb, concerns/good_job/advisory_lockable.rb,
-- process.rb, lib/good_job/notifier.rb). One statement per `-- name:` block; %(x)s parameters.
--
-- Time: every timestamp column is `timestamp(6) without time zone` holding UTC. Rails binds Ruby's
-- Time.current (UTC) as a literal; here `(now() AT TIME ZONE 'UTC')` stands for it (session-
-- TimeZone independent). Never compare these columns with now() / LOCALTIMESTAMP unqualified.
--
-- Advisory lock key of a job (default hash_function "md5"; table name, not schema-qualified):
--   ('x' || substr(md5('good_jobs' || '-' || id::text), 1, 16))::bit(64)::bigint
-- pg_locks shows it as locktype 'advisory', objsubid 1,
--   classid = (key >> 32) & 0xffffffff as oid, objid = key & 0xffffffff as oid.
-- Default lock_strategy is :advisory (GOOD_JOB_LOCK_STRATEGY / config.good_job.lock_strategy).
-- With :advisory the SESSION lock is held on the worker's connection for the whole perform and
-- released with pg_advisory_unlock afterwards (or when the connection dies).

-- name: enqueue
-- GoodJob::Job.enqueue -> save! (INSERT). id = active_job_id = ActiveJob job_id (uuid).
-- serialized_params = ActiveJob#serialize: {"job_class","job_id","provider_job_id","queue_name",
-- "priority","arguments","executions":0,"exception_executions":{},"locale","timezone",
-- "enqueued_at","scheduled_at"}. priority default 0, queue 'default'.
INSERT INTO good_jobs (id, active_job_id, job_class, queue_name, priority, serialized_params,
                       scheduled_at, created_at, updated_at, concurrency_key, labels)
VALUES (%(id)s::uuid, %(id)s::uuid, %(job_class)s, %(queue_name)s, %(priority)s,
        %(serialized_params)s::jsonb,
        coalesce(%(scheduled_at)s::timestamp, (now() AT TIME ZONE 'UTC')),
        (now() AT TIME ZONE 'UTC'), (now() AT TIME ZONE 'UTC'), NULL, NULL)
RETURNING *;

-- name: claim_advisory
-- Default :advisory strategy: Job.unfinished.dequeueing_ordered.only_scheduled.limit(1)
--   .with_advisory_lock_claim(select_limit: queue_select_limit = 1000).
-- Run on the worker's own (sticky) connection in autocommit; the lock stays until
-- unlock_advisory. Order: dequeue_query_sort default :created_at -> priority ASC NULLS LAST,
-- created_at ASC (with :scheduled_at -> priority, scheduled_at, id). A queue filter
-- (`queue_name IN (...)`) is added for a non-'*' queue string. NOTE: performed_at and locked_by_id
-- are NOT in the filter: a job whose worker died (session gone) is immediately claimable again.
SELECT "good_jobs".* FROM "good_jobs"
WHERE "good_jobs"."id" IN (
  WITH "rows" AS MATERIALIZED (
    SELECT "good_jobs"."id" FROM "good_jobs"
    WHERE "good_jobs"."finished_at" IS NULL
      AND "good_jobs"."scheduled_at" <= (now() AT TIME ZONE 'UTC')
    ORDER BY priority ASC NULLS LAST, "good_jobs"."created_at" ASC
    LIMIT %(select_limit)s
  )
  SELECT "rows"."id" FROM "rows"
  WHERE pg_try_advisory_lock(('x' || substr(md5('good_jobs' || '-' || "rows"."id"::text), 1, 16))::bit(64)::bigint)
  LIMIT 1
)
ORDER BY priority ASC NULLS LAST, "good_jobs"."created_at" ASC;

-- name: claim_skiplocked
-- lock_strategy :skiplocked (and :hybrid, which additionally takes the advisory lock inside
-- the FROM-subquery). lock_type: 0 advisory, 1 skiplocked, 2 hybrid.
WITH candidate AS MATERIALIZED (
  SELECT "good_jobs"."id" FROM "good_jobs"
  WHERE "good_jobs"."finished_at" IS NULL AND "good_jobs"."locked_by_id" IS NULL
    AND "good_jobs"."scheduled_at" <= (now() AT TIME ZONE 'UTC')
  ORDER BY priority ASC NULLS LAST, "good_jobs"."created_at" ASC
  LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED
)
UPDATE "good_jobs"
SET locked_by_id = %(process_id)s::uuid,
    locked_at = (now() AT TIME ZONE 'UTC'),
    lock_type = 1
FROM candidate
WHERE "good_jobs".id = candidate.id
RETURNING "good_jobs".*;

-- name: executable_check
-- Job#executable?: reload.finished_at.blank? (advisory path, after the claim).
SELECT "good_jobs".* FROM "good_jobs" WHERE "good_jobs"."id" = %(id)s::uuid LIMIT 1;

-- name: perform_mark_interrupted_executions
-- Only when the claimed job already has performed_at (previous worker died mid-perform):
-- the open execution rows get error "GoodJob::InterruptedError: Interrupted after starting
-- perform at '<performed_at>'", error_event 0 (interrupted); the job row gets the same error and
-- error_event 0 in perform_start. (With GoodJob::ActiveJobExtensions::InterruptErrors included,
-- the job then raises GoodJob::InterruptError, retryable via retry_on.)
UPDATE "good_job_executions"
SET error = %(error)s, finished_at = (now() AT TIME ZONE 'UTC'), error_event = 0,
    duration = %(duration)s::interval
WHERE "good_job_executions"."active_job_id" = %(id)s::uuid
  AND "good_job_executions"."finished_at" IS NULL
  AND "good_job_executions"."created_at" IS NOT NULL;

-- name: perform_start_execution
-- Job#perform, in one transaction with perform_start_job.
INSERT INTO good_job_executions (active_job_id, job_class, queue_name, serialized_params,
                                 scheduled_at, created_at, updated_at, process_id)
SELECT id, job_class, queue_name, serialized_params, coalesce(scheduled_at, created_at),
       (now() AT TIME ZONE 'UTC'), (now() AT TIME ZONE 'UTC'), %(process_id)s::uuid
FROM good_jobs WHERE id = %(id)s::uuid
RETURNING id;

-- name: perform_start_job
-- performed_at + executions_count; with :advisory also locked_by_id/locked_at/lock_type 0
-- (already set by the claim for :skiplocked/:hybrid: their claim's locked_at is kept and
-- lock_type is the strategy's). error/error_event only change when the previous attempt was
-- interrupted (pass NULL/NULL to keep them).
UPDATE good_jobs
SET performed_at = (now() AT TIME ZONE 'UTC'),
    executions_count = coalesce(executions_count, 0) + 1,
    locked_by_id = %(process_id)s::uuid,
    locked_at = CASE WHEN %(lock_type)s::smallint = 0 THEN (now() AT TIME ZONE 'UTC')
                     ELSE locked_at END,
    lock_type = %(lock_type)s::smallint,
    error = coalesce(%(error)s, error),
    error_event = coalesce(%(error_event)s::smallint, error_event),
    updated_at = (now() AT TIME ZONE 'UTC')
WHERE id = %(id)s::uuid;

-- name: finish_execution
-- End of perform (one transaction with finish_job): execution row closed.
UPDATE good_job_executions
SET finished_at = (now() AT TIME ZONE 'UTC'), duration = %(duration)s::interval,
    error = %(error)s, error_event = %(error_event)s::smallint,
    error_backtrace = %(error_backtrace)s::text[],
    updated_at = (now() AT TIME ZONE 'UTC')
WHERE id = %(execution_id)s::uuid;

-- name: finish_job
-- Success (error NULL) or final failure. error = "<ExceptionClass>: <message>",
-- error_event: 1 unhandled, 2 handled, 4 retry_stopped (retry_on exhausted), 5 discarded
-- (discard_on). The row stays (GoodJob.preserve_job_records default true; else DELETE).
UPDATE good_jobs
SET locked_by_id = NULL, locked_at = NULL, lock_type = NULL,
    error = %(error)s, error_event = %(error_event)s::smallint,
    finished_at = (now() AT TIME ZONE 'UTC'),
    updated_at = (now() AT TIME ZONE 'UTC')
WHERE id = %(id)s::uuid;

-- name: retry_job_in_perform
-- ActiveJob retry_on inside perform: the SAME row is re-enqueued (GoodJob::Job.enqueue with
-- CurrentThread.job == self) and then finished as "reenqueued": serialized_params executions + 1
-- (+ exception_executions), scheduled_at = now + wait, performed_at/finished_at NULL,
-- error = "<Class>: <msg>", error_event 3 (retried), lock columns cleared.
UPDATE good_jobs
SET serialized_params = jsonb_set(serialized_params, '{executions}',
                                  to_jsonb(coalesce((serialized_params->>'executions')::int, 0) + 1)),
    scheduled_at = (now() AT TIME ZONE 'UTC') + %(wait)s::interval,
    performed_at = NULL, finished_at = NULL,
    locked_by_id = NULL, locked_at = NULL, lock_type = NULL,
    error = %(error)s, error_event = 3,
    updated_at = (now() AT TIME ZONE 'UTC')
WHERE id = %(id)s::uuid;

-- name: unlock_advisory
-- After perform (ensure block): advisory_unlock of the job key on the same connection
-- (repeated while pg_locks still shows it owned by pg_backend_pid(), to clear CTE phantoms).
SELECT pg_advisory_unlock(('x' || substr(md5(%(key)s::text), 1, 16))::bit(64)::bigint) AS unlocked;

-- name: jobs_with_advisory_lock
-- Job.joins_advisory_locks / includes_advisory_locks (dashboard "running?" = locktype present
-- OR locked_by_id present). Read-only; usable by a monitor.
SELECT good_jobs.id, good_jobs.performed_at, good_jobs.locked_by_id,
       pg_locks.locktype, pg_locks.pid AS lock_pid
FROM good_jobs
LEFT JOIN pg_locks ON pg_locks.locktype = 'advisory'
  AND pg_locks.objsubid = 1
  AND pg_locks.classid = substring((('x' || substr(md5('good_jobs' || '-' || good_jobs.id::text), 1, 16))::bit(64)::bigint)::bit(64) from 1 for 32)::bit(32)::int
  AND pg_locks.objid = substring((('x' || substr(md5('good_jobs' || '-' || good_jobs.id::text), 1, 16))::bit(64)::bigint)::bit(64) from 33 for 32)::bit(32)::int
WHERE good_jobs.finished_at IS NULL;

-- name: process_register
-- GoodJob::Process.find_or_create_record: id = the capsule's process uuid (= locked_by_id and
-- good_job_executions.process_id). lock_type 0 only with advisory_lock_heartbeat (default: on in
-- development only); then the notifier connection also holds the advisory lock
-- key 'good_job_processes-<id>'.
INSERT INTO good_job_processes (id, state, lock_type, created_at, updated_at)
VALUES (%(id)s::uuid, %(state)s::jsonb, %(lock_type)s::smallint,
        (now() AT TIME ZONE 'UTC'), (now() AT TIME ZONE 'UTC'));

-- name: process_heartbeat
-- Process#refresh (refresh_if_stale: when updated_at older than STALE_INTERVAL 30 s; the tracker
-- renews every 30 s + 0..3 s jitter, and the notifier's tick).
UPDATE good_job_processes
SET state = %(state)s::jsonb, updated_at = (now() AT TIME ZONE 'UTC')
WHERE id = %(id)s::uuid;

-- name: dashboard_state_counts
-- JobsFilter#states (the dashboard's counts). executions = serialized_params->>'executions'.
SELECT
  count(*) FILTER (WHERE finished_at IS NULL AND scheduled_at > (now() AT TIME ZONE 'UTC')
                   AND (serialized_params->>'executions')::integer < 2)      AS scheduled,
  count(*) FILTER (WHERE finished_at IS NULL AND scheduled_at > (now() AT TIME ZONE 'UTC')
                   AND (serialized_params->>'executions')::integer > 1)      AS retried,
  count(*) FILTER (WHERE performed_at IS NULL AND finished_at IS NULL
                   AND scheduled_at <= (now() AT TIME ZONE 'UTC'))           AS queued,
  count(*) FILTER (WHERE performed_at IS NOT NULL AND finished_at IS NULL)   AS running,
  count(*) FILTER (WHERE finished_at IS NOT NULL AND error IS NULL)          AS succeeded,
  count(*) FILTER (WHERE finished_at IS NOT NULL AND error IS NOT NULL)      AS discarded
FROM good_jobs;
