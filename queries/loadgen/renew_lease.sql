-- purpose: heartbeat for a long job: push its lease expiry forward, only while this worker still holds the lease
UPDATE {table} AS t
SET {lease_until_col} = now() + make_interval(secs => %(lease_s)s)
WHERE {job_id} = %(id)s
  AND t.{status} = %(running)s::{status_type}
  AND {guard}
RETURNING {job_id}
