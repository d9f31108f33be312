-- purpose: requeue pg-boss 11 jobs still as observed (state, retry_count) and, unless forced, past their claim's expiry: what pg-boss 11's fail path does to a job whose claim expired (retry, a message in output, started_on kept so that the next claim advances retry_count, which fences the old run's late completion), due now, with retry_limit raised past retry_count as its retry() does where the retries were used up
UPDATE {table} AS t
SET state = 'retry',
    retry_limit = greatest(t.retry_limit, t.retry_count + 1),
    start_after = now(),
    completed_on = NULL,
    output = jsonb_build_object('value', jsonb_build_object('message', 'requeued by queuetop'))
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, {lease_token}::text AS new_token
