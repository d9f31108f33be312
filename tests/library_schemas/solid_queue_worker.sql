-- The statements tests/emulated_workers runs to emulate this library's worker (a subset).
-- Solid Queue 1.5.0 worker SQL, reconstructed from the ActiveRecord code that emits it
-- (app/models/solid_queue/*.rb, lib/solid_queue/*.rb). One statement per `-- name:` block.
-- Blocks marked "TX n/m" run together in ONE transaction, in that order.
-- Time: timestamp(6) without time zone, UTC (Rails sets the session TimeZone to UTC and binds
-- Time.current; insert_all uses CURRENT_TIMESTAMP in that UTC session). `(now() AT TIME ZONE
-- 'UTC')` stands for it here. No advisory locks anywhere; the claim is FOR UPDATE SKIP LOCKED
-- (SolidQueue.use_skip_locked, default true) and no lock is held while the job runs: ownership is
-- the solid_queue_claimed_executions row (job_id unique, process_id -> solid_queue_processes.id).

-- name: enqueue_job
-- Job.enqueue -> create! ; then after_create prepare_for_execution: due (scheduled_at <= now)
-- -> dispatch -> ready (or blocked when a concurrency limit is hit); else -> scheduled.
-- arguments = ActiveJob#serialize as JSON text. priority default 0, queue 'default'.
INSERT INTO solid_queue_jobs (queue_name, class_name, arguments, priority, active_job_id,
                              scheduled_at, concurrency_key, created_at, updated_at)
VALUES (%(queue_name)s, %(class_name)s, %(arguments)s, %(priority)s, %(active_job_id)s,
        coalesce(%(scheduled_at)s::timestamp, (now() AT TIME ZONE 'UTC')), %(concurrency_key)s,
        (now() AT TIME ZONE 'UTC'), (now() AT TIME ZONE 'UTC'))
RETURNING id;

-- name: dispatch_ready
-- ReadyExecution.create_or_find_by!(job_id:) (assumes queue_name/priority from the job).
INSERT INTO solid_queue_ready_executions (job_id, queue_name, priority, created_at)
SELECT id, queue_name, priority, (now() AT TIME ZONE 'UTC') FROM solid_queue_jobs WHERE id = %(job_id)s
RETURNING id;

-- name: schedule_job
-- ScheduledExecution.create_or_find_by!(job_id:) for a future scheduled_at.
INSERT INTO solid_queue_scheduled_executions (job_id, queue_name, priority, scheduled_at, created_at)
SELECT id, queue_name, priority, scheduled_at, (now() AT TIME ZONE 'UTC') FROM solid_queue_jobs WHERE id = %(job_id)s
RETURNING id;

-- name: block_job
-- Job#dispatch of a concurrency-limited job whose semaphore is taken: a BlockedExecution until
-- expires_at (now + the job class's concurrency duration, default 3 minutes).
INSERT INTO solid_queue_blocked_executions (job_id, queue_name, priority, concurrency_key,
                                            expires_at, created_at)
SELECT id, queue_name, priority, concurrency_key, (now() AT TIME ZONE 'UTC') + interval '3 minutes',
       (now() AT TIME ZONE 'UTC')
FROM solid_queue_jobs WHERE id = %(job_id)s
RETURNING id;

-- name: process_register
-- Process.register (every supervisor/worker/dispatcher/scheduler at boot). kind: 'Supervisor',
-- 'Worker', 'Dispatcher', 'Scheduler'; name: "<kind>-<random hex>"; metadata JSON text
-- (worker: {"queues":"*","thread_pool_size":3,...}); supervisor_id = parent supervisor's id.
INSERT INTO solid_queue_processes (kind, last_heartbeat_at, supervisor_id, pid, hostname,
                                   metadata, created_at, name)
VALUES (%(kind)s, (now() AT TIME ZONE 'UTC'), %(supervisor_id)s, %(pid)s, %(hostname)s,
        %(metadata)s, (now() AT TIME ZONE 'UTC'), %(name)s)
RETURNING id;

-- name: claim_select
-- TX 1/4  ReadyExecution.claim (Worker#poll, every polling_interval 0.1 s while idle threads):
-- queues "*" and no pauses -> no queue filter; otherwise one query per queue with
-- `WHERE queue_name = <queue>` (in the configured order). limit = idle threads (default 3).
SELECT "solid_queue_ready_executions"."id", "solid_queue_ready_executions"."job_id"
FROM "solid_queue_ready_executions"
ORDER BY "solid_queue_ready_executions"."priority" ASC, "solid_queue_ready_executions"."job_id" ASC
LIMIT %(limit)s
FOR UPDATE SKIP LOCKED;

-- name: claim_insert
-- TX 2/4  ClaimedExecution.claiming -> insert_all!
INSERT INTO solid_queue_claimed_executions (job_id, process_id, created_at)
SELECT unnest(%(job_ids)s::bigint[]), %(process_id)s, (now() AT TIME ZONE 'UTC')
RETURNING id;

-- name: claim_reload
-- TX 3/4
SELECT * FROM solid_queue_claimed_executions
WHERE job_id = ANY(%(job_ids)s::bigint[]) AND process_id = %(process_id)s;

-- name: claim_delete_ready
-- TX 4/4
DELETE FROM solid_queue_ready_executions WHERE id = ANY(%(ready_ids)s::bigint[]);

-- name: finalize_lock
-- TX 1/3 of ClaimedExecution#finished / #failed_with / #release (unless_already_finalized):
-- `unscoped.lock.find_by(id:)`; no row -> someone else finalized it -> skip everything.
SELECT * FROM solid_queue_claimed_executions WHERE id = %(claimed_id)s LIMIT 1 FOR UPDATE;

-- name: finish_job
-- TX 2/3 (success) job.finished!: preserve_finished_jobs (default true) -> touch(:finished_at);
-- otherwise DELETE FROM solid_queue_jobs WHERE id (cascade).
UPDATE solid_queue_jobs
SET finished_at = (now() AT TIME ZONE 'UTC'), updated_at = (now() AT TIME ZONE 'UTC')
WHERE id = %(job_id)s;

-- name: fail_job
-- TX 2/3 (unhandled exception) job.failed_with(e): error = JSON
-- {"exception_class":..,"message":..,"backtrace":[..]}. (ActiveJob retry_on / discard_on never get
-- here: retry_on enqueues a NEW solid_queue_jobs row with the same active_job_id and the old one
-- is finished normally.)
INSERT INTO solid_queue_failed_executions (job_id, error, created_at)
VALUES (%(job_id)s, %(error)s, (now() AT TIME ZONE 'UTC'))
RETURNING id;

-- name: finalize_delete_claim
-- TX 3/3
DELETE FROM solid_queue_claimed_executions WHERE id = %(claimed_id)s;

-- name: process_heartbeat
-- Process#heartbeat every process_heartbeat_interval (60 s): with_lock { touch(:last_heartbeat_at) }
-- = SELECT ... FOR UPDATE then this UPDATE, one transaction. Row gone (pruned) -> the process
-- re-registers.
UPDATE solid_queue_processes SET last_heartbeat_at = (now() AT TIME ZONE 'UTC') WHERE id = %(id)s;

-- name: status_counts
-- Job#status derivation, counted (what Mission Control Jobs shows per status).
SELECT
  (SELECT count(*) FROM solid_queue_ready_executions)      AS ready,
  (SELECT count(*) FROM solid_queue_scheduled_executions)  AS scheduled,
  (SELECT count(*) FROM solid_queue_blocked_executions)    AS blocked,
  (SELECT count(*) FROM solid_queue_claimed_executions)    AS claimed,
  (SELECT count(*) FROM solid_queue_failed_executions)     AS failed,
  (SELECT count(*) FROM solid_queue_jobs WHERE finished_at IS NOT NULL) AS finished;
