-- purpose: hand a claimed job back to ready when its worker stops mid-work, only if it still holds the lease
UPDATE {table} AS t
SET {status} = %(ready)s::{status_type}{release_set}
WHERE {job_id} = %(id)s
  AND t.{status} = %(running)s::{status_type}
  AND {guard}
RETURNING {job_id}
