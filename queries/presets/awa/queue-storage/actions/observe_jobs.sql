-- purpose: the current state of the given awa jobs on its queue storage, as the operator sees them (a plain read, no lock; the table is this folder's table.sql, one row per job across awa's planes)
SELECT i.queuetop_given,
       {job_id}::text AS id,
       {state}::text AS status,
       {worker}::text AS worker,
       {lease_token}::text AS lease_token,
       {attempts}::int AS attempts,
       {lease_until} AS lease_until,
       {is_stale} AS expired,
       {requeue_refusal}::text AS requeue_refusal,
       {dead_letter_refusal}::text AS dead_letter_refusal
FROM unnest(%(ids)s::text[]) AS i(queuetop_given)
JOIN {table} AS t ON {job_id} = i.queuetop_given::{id_type}
