-- purpose: the rescuer's observation: running jobs past their lease, row-locked for its transaction, skipping rows a worker holds right now (it never waits behind a worker)
SELECT {job_id}::text AS id,
       t.{status}::text AS status,
       {worker}::text AS worker,
       {lease_token}::text AS lease_token,
       {attempts}::int AS attempts,
       {lease_until} AS lease_until
FROM {table} AS t
WHERE t.{status} = %(running)s::{status_type}
  AND coalesce({lease_until}, {started_at} + make_interval(secs => %(stale_after_s)s)) < now()
ORDER BY {job_id}
LIMIT %(limit)s
FOR UPDATE OF t SKIP LOCKED
