-- purpose: the next batch of jobs a runbook command acts on, as an action observes them (a plain read, no lock): a role's jobs (only stale ones for a stale-lease requeue), optionally older than a duration, of one worker or group, in id order after the last batch (keyset)
SELECT {job_id}::text AS queuetop_given,
       {job_id}::text AS id,
       {state}::text AS status,
       {worker}::text AS worker,
       {lease_token}::text AS lease_token,
       {attempts}::int AS attempts,
       {lease_until} AS lease_until,
       {is_stale} AS expired,
       {requeue_refusal}::text AS requeue_refusal,
       {dead_letter_refusal}::text AS dead_letter_refusal
FROM {table} AS t
WHERE {rows}
  AND {stale}
  AND {older}
  AND {of_worker}
  AND {in_group}
  AND {after}
ORDER BY {job_id}
LIMIT %(limit)s
