-- purpose: the current state of the given jobs, as the operator sees it (a plain read, no lock); ids arrive as text and are cast to the id column's type
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
