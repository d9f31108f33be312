-- purpose: record a failed attempt: back to ready for a retry, or the terminal state once attempts reach max_attempts; guarded by the lease token
UPDATE {table} AS t
SET {status} = CASE WHEN coalesce({attempts}, %(max_attempts)s) >= %(max_attempts)s
                    THEN %(terminal)s::{status_type}
                    ELSE %(ready)s::{status_type} END{fail_set}
WHERE {job_id} = %(id)s
  AND t.{status} = %(running)s::{status_type}
  AND {guard}
RETURNING t.{status}::text AS status
