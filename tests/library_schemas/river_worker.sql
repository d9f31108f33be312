-- The statements tests/emulated_workers runs to emulate this library's worker (a subset).
-- River v0.43.0 worker SQL, taken from riverdriver/riverpgxv5/internal/dbsqlc/*.sql (sqlc queries).
-- Conversion: sqlc `@name` -> %(name)s ; `sqlc.narg('x')` -> %(x)s (NULL allowed: then now() is
-- used) ; `/* TEMPLATE: schema */` -> nothing (search_path). Bodies otherwise verbatim.
-- One statement per `-- name:` block. Arrays are passed as Python lists.
-- River takes NO advisory lock and holds NO row lock while a job runs: ownership is only
-- state = 'running' (+ attempted_at / attempted_by). Every transition after the claim is guarded
-- by `river_job.state = 'running'` inside JobSetStateIfRunningMany.

-- name: job_insert
-- Single-row form of JobInsertFastMany (the client sends arrays; same columns, same casts).
-- state is 'available' (or 'scheduled' when scheduled_at is in the future); client default
-- max_attempts 25, priority 1, queue 'default'.
INSERT INTO river_job(args, created_at, kind, max_attempts, metadata, priority, queue,
                      scheduled_at, state, tags, unique_key, unique_states)
VALUES (%(args)s::jsonb, now(), %(kind)s::text, %(max_attempts)s::smallint,
        coalesce(%(metadata)s::jsonb, '{}'::jsonb), %(priority)s::smallint, %(queue)s::text,
        coalesce(%(scheduled_at)s::timestamptz, now()), %(state)s::river_job_state,
        coalesce(%(tags)s::varchar(255)[], '{}'), NULL, NULL)
RETURNING *;

-- name: job_get_available
-- JobGetAvailable: the claim. Producer passes max_attempted_by = 100 and attempted_by = client ID
-- (default "<hostname>_<UTC start time>").
WITH locked_jobs AS (
    SELECT
        *
    FROM
        river_job
    WHERE
        state = 'available'
        AND queue = %(queue)s::text
        AND scheduled_at <= coalesce(%(now)s::timestamptz, now())
    ORDER BY
        priority ASC,
        scheduled_at ASC,
        id ASC
    LIMIT %(max_to_lock)s::integer
    FOR UPDATE
    SKIP LOCKED
)
UPDATE
    river_job
SET
    state = 'running',
    attempt = river_job.attempt + 1,
    attempted_at = coalesce(%(now)s::timestamptz, now()),
    attempted_by = array_append(
        CASE WHEN array_length(river_job.attempted_by, 1) >= %(max_attempted_by)s::int
        -- +2 instead of +1 because Postgres array indexing starts at 1, not 0.
        THEN river_job.attempted_by[array_length(river_job.attempted_by, 1) + 2 - %(max_attempted_by)s:]
        ELSE river_job.attempted_by
        END,
        %(attempted_by)s::text
    )
FROM
    locked_jobs
WHERE
    river_job.id = locked_jobs.id
RETURNING
    river_job.*;

-- name: job_set_state_if_running_many
-- JobSetStateIfRunningMany: complete / error-retry / discard / cancel / snooze, batched by the
-- completer. Parameter sets per job (see river.md): completed, retryable (errors append,
-- scheduled_at = retry time), available (retry within scheduler interval 5 s), discarded
-- (attempt >= max_attempts), cancelled, scheduled (snooze, attempt restored).
WITH job_input AS (
    SELECT
        unnest(%(ids)s::bigint[])                     AS id,
        unnest(%(attempt_do_update)s::boolean[])      AS attempt_do_update,
        unnest(%(attempt)s::int[])                    AS attempt,
        unnest(%(errors_do_update)s::boolean[])       AS errors_do_update,
        unnest(%(errors)s::jsonb[])                   AS errors,
        unnest(%(finalized_at_do_update)s::boolean[]) AS finalized_at_do_update,
        unnest(%(finalized_at)s::timestamptz[])       AS finalized_at,
        unnest(%(metadata_do_merge)s::boolean[])      AS metadata_do_merge,
        unnest(%(metadata_updates)s::jsonb[])         AS metadata_updates,
        unnest(%(scheduled_at_do_update)s::boolean[]) AS scheduled_at_do_update,
        unnest(%(scheduled_at)s::timestamptz[])       AS scheduled_at,
        unnest(%(state)s::text[])::river_job_state AS state
),
updated AS (
    UPDATE river_job
    SET
        attempt = CASE
            WHEN river_job.state = 'running'
                 AND NOT (job_input.state IN ('retryable','scheduled') AND river_job.metadata ? 'cancel_attempted_at')
                 AND job_input.attempt_do_update
            THEN job_input.attempt
            ELSE river_job.attempt
        END,
        errors = CASE
            WHEN river_job.state = 'running'
                 AND job_input.errors_do_update
            THEN array_append(river_job.errors, job_input.errors)
            ELSE river_job.errors
        END,
        finalized_at = CASE
            WHEN river_job.state = 'running'
                 AND (job_input.state IN ('retryable','scheduled') AND river_job.metadata ? 'cancel_attempted_at')
            THEN coalesce(%(now)s::timestamptz, now())
            WHEN river_job.state = 'running'
                 AND job_input.finalized_at_do_update
            THEN job_input.finalized_at
            ELSE river_job.finalized_at
        END,
        metadata = CASE
            WHEN job_input.metadata_do_merge
            THEN river_job.metadata || job_input.metadata_updates
            ELSE river_job.metadata
        END,
        scheduled_at = CASE
            WHEN river_job.state = 'running'
                 AND NOT (job_input.state IN ('retryable','scheduled') AND river_job.metadata ? 'cancel_attempted_at')
                 AND job_input.scheduled_at_do_update
            THEN job_input.scheduled_at
            ELSE river_job.scheduled_at
        END,
        state = CASE
            WHEN river_job.state = 'running'
                 AND (job_input.state IN ('retryable','scheduled') AND river_job.metadata ? 'cancel_attempted_at')
            THEN 'cancelled'::river_job_state
            WHEN river_job.state = 'running'
            THEN job_input.state
            ELSE river_job.state
        END
    FROM job_input
    WHERE river_job.id = job_input.id
      AND (river_job.state = 'running' OR job_input.metadata_do_merge)
    RETURNING river_job.*
)
SELECT river_job.*
FROM river_job
JOIN job_input ON river_job.id = job_input.id
WHERE NOT EXISTS (
    SELECT 1
    FROM updated
    WHERE updated.id = river_job.id
)
UNION ALL
SELECT *
FROM updated
ORDER BY id;

-- name: job_cancel
-- JobCancel = Client.JobCancel: non-running -> cancelled now; running -> only metadata
-- cancel_attempted_at + NOTIFY '<schema>.river_control' {"action":"cancel",...}; the owning client
-- cancels the job context, or (dead client) the rescuer finalizes it as cancelled.
WITH locked_job AS (
    SELECT
        id, queue, state, finalized_at
    FROM river_job
    WHERE river_job.id = %(id)s
    FOR UPDATE
),
notification AS (
    SELECT
        id,
        pg_notify(
            concat(coalesce(%(schema)s::text, current_schema()), '.', %(control_topic)s::text),
            json_build_object('action', 'cancel', 'job_id', id, 'queue', queue)::text
        )
    FROM
        locked_job
    WHERE
        state NOT IN ('cancelled', 'completed', 'discarded')
        AND finalized_at IS NULL
),
updated_job AS (
    UPDATE river_job
    SET
        -- If the job is actively running, we want to let its current client and
        -- producer handle the cancellation. Otherwise, immediately cancel it.
        state = CASE WHEN state = 'running' THEN state ELSE 'cancelled' END,
        finalized_at = CASE WHEN state = 'running' THEN finalized_at ELSE coalesce(%(now)s::timestamptz, now()) END,
        -- Mark the job as cancelled by query so that the rescuer knows not to
        -- rescue it, even if it gets stuck in the running state:
        metadata = jsonb_set(metadata, '{cancel_attempted_at}'::text[], %(cancel_attempted_at)s::jsonb, true)
    FROM notification
    WHERE river_job.id = notification.id
    RETURNING river_job.*
)
SELECT *
FROM river_job
WHERE id = %(id)s::bigint
    AND id NOT IN (SELECT id FROM updated_job)
UNION
SELECT *
FROM updated_job;

-- name: job_count_by_all_states
-- JobCountByAllStates: River's own per-state count.
SELECT state, count(*)
FROM river_job
GROUP BY state;
