-- purpose: River's own recovery, only while the jobs are still as observed (state, worker, attempt and attempted_at) and, unless forced, past River's rescue horizon: a stuck running job gets the JobRescuer's bookkeeping (an error entry, river:rescue_count + 1), then every job JobRetry's effect (available now, finalized_at cleared, max_attempts raised when the attempts are used up, attempt kept: the next claim counts it)
UPDATE {table} AS t
SET state = 'available',
    scheduled_at = now(),
    finalized_at = NULL,
    max_attempts = CASE WHEN t.attempt >= t.max_attempts THEN t.attempt + 1
                        ELSE t.max_attempts END,
    errors = CASE WHEN t.state = 'running'
                  THEN array_append(t.errors, jsonb_build_object(
                      'at', now(), 'attempt', t.attempt,
                      'error', 'Stuck job requeued by queuetop', 'trace', ''))
                  ELSE t.errors END,
    metadata = CASE WHEN t.state = 'running'
                    THEN t.metadata || jsonb_build_object('river:rescue_count', coalesce(
                        CASE WHEN jsonb_typeof(t.metadata -> 'river:rescue_count') = 'number'
                             THEN (t.metadata ->> 'river:rescue_count')::int END, 0) + 1)
                    ELSE t.metadata END
FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
     AS o(id, status, worker, lease_token)
WHERE {job_id} = o.id::{id_type}
  AND {guard}
RETURNING o.id AS queuetop_given, {job_id}::text AS id, NULL::text AS new_token
