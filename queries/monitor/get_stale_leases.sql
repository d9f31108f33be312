-- purpose: running jobs past their lease expiry (or past stale_after since they started), most overdue first, with whether the worker still has a session
WITH stale AS (
    SELECT t.{id} AS id,
           t.{status}::text AS status,
           {worker}::text AS worker,
           {lease_token} AS lease_token,
           {attempts}::int AS attempts,
           {started_at} AS started_at,
           {lease_until} AS lease_until,
           coalesce({lease_until}, {started_at} + make_interval(secs => %(stale_after_s)s)) AS expired_at
    FROM {table} AS t
    WHERE t.{status} = ANY (%(values)s::{status_type}[])
)
SELECT s.id, s.status, s.worker, s.lease_token, s.attempts, s.started_at, s.lease_until,
       extract(epoch FROM now() - s.expired_at)::float8 AS overdue_s,
       CASE
           WHEN s.worker IS NULL OR %(worker_session)s = 'none' THEN NULL
           WHEN %(worker_session)s = 'pid' THEN EXISTS (
               SELECT 1 FROM pg_stat_activity AS a WHERE a.pid::text = s.worker)
           ELSE EXISTS (
               SELECT 1 FROM pg_stat_activity AS a WHERE a.application_name = s.worker)
       END AS worker_alive
FROM stale AS s
WHERE s.expired_at < now()
ORDER BY s.expired_at, s.id
LIMIT %(limit)s
