-- purpose: the rescuer: running jobs whose lease expired go back to ready (or the terminal state after max_attempts), advancing the token so a late completion by the old owner changes nothing
WITH expired AS (
    SELECT t.{id} AS id
    FROM {table} AS t
    WHERE t.{status} = %(running)s::{status_type}
      AND coalesce({lease_until}, {started_at} + make_interval(secs => %(stale_after_s)s)) < now()
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
)
UPDATE {table} AS t
SET {status} = CASE WHEN coalesce({attempts}, 0) >= %(max_attempts)s
                    THEN %(terminal)s::{status_type}
                    ELSE %(ready)s::{status_type} END{requeue_set}
FROM expired
WHERE t.{id} = expired.id
RETURNING t.{id}, t.{status}::text AS status
