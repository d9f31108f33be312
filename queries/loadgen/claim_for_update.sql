-- purpose: claim up to K ready jobs, waiting for rows other workers hold (READ COMMITTED may then return nothing), and lease them
WITH next AS (
    SELECT {job_id} AS id
    FROM {table} AS t
    WHERE t.{status} = %(ready)s::{status_type}
    ORDER BY {order}
    LIMIT %(batch)s
    FOR UPDATE
)
UPDATE {table} AS t
SET {status} = %(running)s::{status_type}{lease_set}
FROM next
WHERE {job_id} = next.id
RETURNING {job_id} AS id, {lease_token} AS token
