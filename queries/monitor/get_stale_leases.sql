-- purpose: running jobs past their lease (expiry, heartbeat, worker heartbeat, or stale_after since they started), most overdue first, with whether their worker is alive
SELECT {job_id} AS id,
       {state}::text AS status,
       {worker}::text AS worker,
       {lease_token} AS lease_token,
       {attempts}::int AS attempts,
       {started_at} AS started_at,
       {lease_until} AS lease_until,
       extract(epoch FROM now() - {expires_at})::float8 AS overdue_s,
       {worker_alive} AS worker_alive,
       {group}::text AS "group",
       {lease_token}::text AS lease_token_text
FROM {table} AS t
WHERE ({rows}) AND {is_stale}
ORDER BY {expires_at}, {job_id}
LIMIT %(limit)s
