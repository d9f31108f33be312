-- purpose: row-lock the given jobs for an action, skipping rows a worker holds right now (never wait behind a worker), and return their current state
SELECT i.queuetop_given,
       t.{id}::text AS id,
       t.{status}::text AS status,
       {worker}::text AS worker,
       {lease_token}::text AS lease_token,
       {attempts}::int AS attempts,
       {lease_until} AS lease_until,
       coalesce({lease_until}, {started_at} + make_interval(secs => %(stale_after_s)s)) < now()
           AS expired
FROM unnest(%(ids)s::text[]) AS i(queuetop_given)
JOIN {table} AS t ON t.{id} = i.queuetop_given::{id_type}
FOR UPDATE OF t SKIP LOCKED
