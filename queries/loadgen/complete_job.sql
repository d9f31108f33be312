-- purpose: mark one running job done, only if this worker still holds its lease (token fencing)
UPDATE {table} AS t
SET {status} = %(done)s::{status_type}{finish_set}
WHERE {job_id} = %(id)s
  AND t.{status} = %(running)s::{status_type}
  AND {guard}
RETURNING {job_id}
