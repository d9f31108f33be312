-- purpose: claim up to K ready jobs, skipping rows other workers hold, and lease them in the same statement
WITH next AS (
    SELECT {job_id} AS id
    FROM {table} AS t
    WHERE t.{status} = %(ready)s::{status_type}
    ORDER BY {order}
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
)
UPDATE {table} AS t
SET {status} = %(running)s::{status_type}{lease_set}
FROM next
WHERE {job_id} = next.id
RETURNING {job_id} AS id, {lease_token} AS token
