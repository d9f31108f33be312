-- purpose: claim up to K ready jobs, failing at once with lock_not_available on a row another worker holds, and lease them
WITH next AS (
    SELECT {job_id} AS id
    FROM {table} AS t
    WHERE t.{status} = %(ready)s::{status_type}
    ORDER BY {order}
    LIMIT %(batch)s
    FOR UPDATE NOWAIT
)
UPDATE {table} AS t
SET {status} = %(running)s::{status_type}{lease_set}
FROM next
WHERE {job_id} = next.id
RETURNING {job_id} AS id, {lease_token} AS token
