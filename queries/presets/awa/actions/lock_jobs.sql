-- purpose: row-lock the given awa jobs for an action, skipping rows a worker holds right now (never wait behind a worker), and return their current state: in awa.jobs_hot, and in awa.scheduled_jobs (its scheduled and retryable jobs, refused by name as observe_jobs says)
WITH hot AS (
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
  FOR UPDATE OF t SKIP LOCKED
), scheduled AS (
  SELECT i.queuetop_given,
         {job_id}::text AS id,
         {state}::text AS status,
         {worker}::text AS worker,
         {lease_token}::text AS lease_token,
         {attempts}::int AS attempts,
         {lease_until} AS lease_until,
         {is_stale} AS expired,
         'awa keeps this ' || {state}::text || ' job in awa.scheduled_jobs and makes it available when due (run_at): nothing to requeue' AS requeue_refusal,
         'awa keeps this ' || {state}::text || ' job in awa.scheduled_jobs: cancel it with awa''s own cancel (client.cancel)' AS dead_letter_refusal
  FROM unnest(%(ids)s::text[]) AS i(queuetop_given)
  JOIN {schema}.scheduled_jobs AS t ON {job_id} = i.queuetop_given::{id_type}
  FOR UPDATE OF t SKIP LOCKED
)
SELECT * FROM hot
UNION ALL
SELECT * FROM scheduled
