-- purpose: River's discard, only while the jobs are still as observed and, unless forced, past River's rescue horizon: discarded with finalized_at (River's CHECK wants both) and an error entry with the reason; a stuck running job also counts a rescue, as River's JobRescuer does when it discards one
UPDATE {table} AS t
SET state = 'discarded',
    finalized_at = now(),
    errors = array_append(t.errors, jsonb_build_object(
        'at', now(), 'attempt', t.attempt,
        'error', 'Discarded by queuetop: ' || %(reason)s::text, 'trace', '')),
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
