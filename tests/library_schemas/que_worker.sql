-- The statements tests/emulated_workers runs to emulate this library's worker (a subset).
-- Que 2.4.1 worker SQL, verbatim from lib/que/{locker,poller,job,job_methods,worker}.rb and
-- lib/que/utils/introspection.rb; `$n` -> %(name)s, `#{Que.job_schema_version}` -> 2.
-- One statement per `-- name:` block (poller_setup is one multi-statement string, as Que sends it).
--
-- Que's lease is a SESSION advisory lock on the job id, pg_try_advisory_lock(id) (bigint key =
-- the id itself), held on the LOCKER's dedicated connection (application_name
-- 'Que Locker: <backend pid>') from claim until the worker thread reports the job finished.
-- The job's own SQL (destroy / finish / set_error / expire) runs on a DIFFERENT pooled
-- connection. pg_locks: locktype 'advisory', objsubid 1, classid = id >> 32, objid = id & 0xffffffff,
-- so id = (classid::bigint << 32) + objid::bigint.

-- name: insert_job
-- Que::Job.enqueue / Que.enqueue (default queue 'default', priority 100, run_at now()).
INSERT INTO public.que_jobs
(queue, priority, run_at, job_class, args, kwargs, data, job_schema_version)
VALUES
(
  coalesce(%(queue)s, 'default')::text,
  coalesce(%(priority)s, 100)::smallint,
  coalesce(%(run_at)s, now())::timestamptz,
  %(job_class)s::text,
  coalesce(%(args)s, '[]')::jsonb,
  coalesce(%(kwargs)s, '{}')::jsonb,
  coalesce(%(data)s, '{}')::jsonb,
  2
)
RETURNING *;

-- name: clean_lockers
-- Locker startup and shutdown: drop our own row and rows of backends that no longer exist.
DELETE FROM public.que_lockers
WHERE pid = pg_backend_pid()
OR NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = public.que_lockers.pid);

-- name: register_locker
-- worker_priorities default [10, 30, 50, NULL, NULL, NULL] ('{10,30,50,NULL,NULL,NULL}').
INSERT INTO public.que_lockers (pid, worker_count, worker_priorities, ruby_pid, ruby_hostname, listening, queues, job_schema_version)
VALUES (pg_backend_pid(), %(worker_count)s::integer, %(worker_priorities)s::integer[], %(ruby_pid)s::integer, %(ruby_hostname)s::text, %(listening)s::boolean, %(queues)s::text[], %(job_schema_version)s::integer);

-- name: poller_setup
-- Poller.setup(connection), once per locker connection (pg_temp objects).
CREATE TYPE pg_temp.que_query_result AS (
  locked boolean,
  remaining_priorities jsonb
);

CREATE FUNCTION pg_temp.lock_and_update_priorities(priorities jsonb, job que_jobs)
RETURNS pg_temp.que_query_result
AS $$
  WITH
    -- Take the lock in a CTE because we want to use the result
    -- multiple times while only taking the lock once.
    lock_taken AS (
      SELECT pg_try_advisory_lock((job).id) AS taken
    ),
    relevant AS (
      SELECT priority, count
      FROM (
        SELECT
          key::smallint AS priority,
          value::text::integer AS count
        FROM jsonb_each(priorities)
        ) t1
      WHERE priority >= (job).priority
      ORDER BY priority ASC
      LIMIT 1
    )
  SELECT
    (SELECT taken FROM lock_taken), -- R
    CASE (SELECT taken FROM lock_taken)
    WHEN false THEN
      -- Simple case - we couldn't lock the job, so don't update the
      -- priorities hash.
      priorities
    WHEN true THEN
      CASE count
      WHEN 1 THEN
        -- Remove the priority from the JSONB doc entirely, rather
        -- than leaving a zero entry in it.
        priorities - priority::text
      ELSE
        -- Decrement the value in the JSONB doc.
        jsonb_set(
          priorities,
          ARRAY[priority::text],
          to_jsonb(count - 1)
        )
      END
    END
  FROM relevant
$$
STABLE
LANGUAGE SQL;

CREATE FUNCTION pg_temp.que_highest_remaining_priority(priorities jsonb) RETURNS smallint AS $$
  SELECT max(key::smallint) FROM jsonb_each(priorities)
$$
STABLE
LANGUAGE SQL;

-- name: poll_jobs
-- The claim (per queue, every poll_interval 5 s or when the last poll filled all slots).
-- held_locks = ids this locker already holds ('{1,2}'), priorities = JobBuffer
-- #available_priorities as JSON, e.g. '{"10":1,"30":1,"50":1,"32767":11}' (NULL worker priority
-- = 32767; the lowest bucket also counts free buffer space, maximum_buffer_size 8).
WITH RECURSIVE jobs AS (
  SELECT
    (j).*,
    l.locked,
    l.remaining_priorities
  FROM (
    SELECT j
    FROM public.que_jobs AS j
    WHERE queue = %(queue)s::text
      AND job_schema_version = 2
      AND NOT id = ANY(%(held_locks)s::bigint[])
      AND priority <= pg_temp.que_highest_remaining_priority(%(priorities)s::jsonb)
      AND run_at <= now()
      AND finished_at IS NULL AND expired_at IS NULL
    ORDER BY priority, run_at, id
    LIMIT 1
  ) AS t1
  JOIN LATERAL (SELECT * FROM pg_temp.lock_and_update_priorities(%(priorities)s::jsonb, j)) AS l ON true
  UNION ALL (
    SELECT
      (j).*,
      l.locked,
      l.remaining_priorities
    FROM (
      SELECT
        remaining_priorities,
        (
          SELECT j
          FROM public.que_jobs AS j
          WHERE queue = %(queue)s::text
            AND job_schema_version = 2
            AND NOT id = ANY(%(held_locks)s::bigint[])
            AND priority <= pg_temp.que_highest_remaining_priority(jobs.remaining_priorities)
            AND run_at <= now()
            AND finished_at IS NULL AND expired_at IS NULL
            AND (priority, run_at, id) >
              (jobs.priority, jobs.run_at, jobs.id)
          ORDER BY priority, run_at, id
          LIMIT 1
        ) AS j

      FROM jobs
      WHERE jobs.id IS NOT NULL AND jobs.remaining_priorities != '{}'::jsonb
      LIMIT 1
    ) AS t1
    JOIN LATERAL (SELECT * FROM pg_temp.lock_and_update_priorities(remaining_priorities, j)) AS l ON true
  )
)
SELECT *
FROM jobs
WHERE locked;

-- name: check_job
-- Worker thread, pooled connection, before running the job.
SELECT 1 AS one
FROM public.que_jobs
WHERE id = %(id)s::bigint;

-- name: destroy_job
-- Default outcome of a successful job (default_resolve_action): the row is DELETED.
DELETE FROM public.que_jobs
WHERE id = %(id)s::bigint;

-- name: finish_job
-- Job calls `finish` explicitly: row kept with finished_at.
UPDATE public.que_jobs
SET finished_at = now()
WHERE id = %(id)s::bigint;

-- name: set_error
-- Error (or `retry_in`): delay = retry_interval(error_count) = error_count**4 + 3 seconds
-- (error_count = new count), message "<Class>: <message>"[0,500], backtrace[0,10000].
UPDATE public.que_jobs
SET error_count          = error_count + 1,
    run_at               = now() + %(delay)s::float * '1 second'::interval,
    last_error_message   = left(%(message)s::text, 500),
    last_error_backtrace = left(%(backtrace)s::text, 10000)
WHERE id = %(id)s::bigint;

-- name: expire_job
-- Error when error_count (incl. this one) > maximum_retry_count (default 15), or `expire`.
UPDATE public.que_jobs
SET error_count = error_count + 1,
    expired_at = now()
WHERE id = %(id)s::bigint;

-- name: unlock_jobs
-- Locker, after the worker reports job_finished (and for displaced / stale jobs); asserts every
-- result is true. Que builds `FROM (VALUES (1), (2)) v (i)`; an unnest is equivalent.
SELECT pg_advisory_unlock(v.i) FROM unnest(%(ids)s::bigint[]) AS v (i);

-- name: job_stats
-- Que.job_stats: per job_class, unfinished rows and how many are locked right now.
SELECT job_class,
       count(*)                    AS count,
       count(locks.id)             AS count_working,
       sum((error_count > 0)::int) AS count_errored,
       max(error_count)            AS highest_error_count,
       min(run_at)                 AS oldest_run_at
FROM public.que_jobs
LEFT JOIN (
  SELECT (classid::bigint << 32) + objid::bigint AS id
  FROM pg_locks
  WHERE locktype = 'advisory'
) locks USING (id)
WHERE finished_at IS NULL AND expired_at IS NULL
GROUP BY job_class
ORDER BY count(*) DESC;

-- name: job_states
-- Que.job_states: jobs being worked right now, with the owning locker's Ruby pid / host.
SELECT que_jobs.*,
       pg.ruby_hostname,
       pg.ruby_pid
FROM public.que_jobs
JOIN (
  SELECT (classid::bigint << 32) + objid::bigint AS id, que_lockers.*
  FROM pg_locks
  JOIN public.que_lockers USING (pid)
  WHERE locktype = 'advisory'
) pg USING (id);
