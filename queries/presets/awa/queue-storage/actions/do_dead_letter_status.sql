-- purpose: fail awa jobs for good on its queue storage, only while still as observed (state, run_lease) and, unless forced, not running on a live heartbeat: a running attempt as awa's worker fails it on a terminal error (its claim receipt closed 'failed', or its lease deleted and its claim closed 'rescue'; attempt_state deleted, its progress kept; a done entry backed by its ready entry, state failed, finalized now, the reason appended to its errors with terminal = true), an available job as awa's cancel takes it out of its lane (a ready tombstone) but written failed with that error; each with a +1 terminal-count delta and its unique claim moved as awa's sync does (awa-model queue_storage.rs fail_terminal_in_tx, take_running_attempt_tx, close_open_receipt_claim_tx, cancel_job_tx, insert_done_rows_tx, awa 0.6); run_lease is kept, so a late write of the old attempt matches nothing
WITH target AS MATERIALIZED (
    SELECT o.id AS queuetop_given, t.*
    FROM unnest(%(ids)s::text[], %(statuses)s::text[], %(workers)s::text[], %(tokens)s::text[])
         AS o(id, status, worker, lease_token)
    JOIN {table} AS t ON {job_id} = o.id::{id_type}
    WHERE {guard}
),
running AS MATERIALIZED (
    SELECT * FROM target
    WHERE state = 'running' AND plane IN ('receipt', 'batch_receipt', 'lease')
),
waiting AS MATERIALIZED (
    SELECT * FROM target WHERE plane = 'ready' AND state = 'available'
),
closed AS (
    INSERT INTO {schema}.lease_claim_closures (claim_slot, job_id, run_lease, outcome, closed_at)
    SELECT claims.claim_slot, claims.job_id, claims.run_lease,
           CASE WHEN r.plane = 'lease' THEN 'rescue' ELSE 'failed' END, clock_timestamp()
    FROM running AS r
    JOIN {schema}.lease_claims AS claims
      ON claims.job_id = r.id AND claims.run_lease = r.run_lease
    ON CONFLICT (claim_slot, job_id, run_lease) DO NOTHING
    RETURNING claim_slot, job_id, run_lease, closed_at
),
marked AS (
    UPDATE {schema}.lease_claims AS claims
    SET closed_at = coalesce(claims.closed_at, closed.closed_at)
    FROM closed
    WHERE claims.claim_slot = closed.claim_slot
      AND claims.job_id = closed.job_id
      AND claims.run_lease = closed.run_lease
    RETURNING claims.job_id
),
closed_batches AS (
    INSERT INTO {schema}.lease_claim_closure_batches (
        claim_slot, ready_slot, ready_generation, outcome, closed_count, receipt_ids,
        receipt_ranges, closed_at)
    SELECT batches.claim_slot, batches.ready_slot, batches.ready_generation,
           CASE WHEN r.plane = 'lease' THEN 'rescue' ELSE 'failed' END,
           count(*)::int,
           array_agg(items.receipt_id ORDER BY items.receipt_id),
           range_agg(int8range(items.receipt_id, items.receipt_id + 1, '[)') ORDER BY items.receipt_id),
           clock_timestamp()
    FROM running AS r
    JOIN {schema}.lease_claim_batches AS batches ON r.id = ANY (batches.job_ids)
    CROSS JOIN LATERAL unnest(batches.job_ids, batches.run_leases, batches.receipt_ids)
         AS items(job_id, run_lease, receipt_id)
    WHERE items.job_id = r.id AND items.run_lease = r.run_lease
      AND NOT EXISTS (
          SELECT 1 FROM {schema}.lease_claim_closures AS closures
          WHERE closures.claim_slot = batches.claim_slot
            AND closures.job_id = items.job_id
            AND closures.run_lease = items.run_lease)
      AND NOT EXISTS (
          SELECT 1 FROM {schema}.lease_claim_closure_batches AS closure_batches
          WHERE closure_batches.claim_slot = batches.claim_slot
            AND closure_batches.receipt_ranges @> items.receipt_id)
    GROUP BY 1, 2, 3, 4
    RETURNING claim_slot
),
dropped_lease AS (
    DELETE FROM {schema}.leases AS lease
    USING running AS r
    WHERE r.plane = 'lease'
      AND lease.job_id = r.id AND lease.run_lease = r.run_lease AND lease.state = 'running'
    RETURNING lease.job_id
),
dropped_attempt AS (
    DELETE FROM {schema}.attempt_state AS attempt
    USING running AS r
    WHERE attempt.job_id = r.id AND attempt.run_lease = r.run_lease
    RETURNING attempt.job_id, attempt.progress
),
tombstoned AS (
    INSERT INTO {schema}.ready_tombstones (
        ready_slot, ready_generation, queue, priority, enqueue_shard, lane_seq, job_id)
    SELECT w.ready_slot, w.ready_generation, w.queue, w.lane_priority, w.enqueue_shard,
           w.lane_seq, w.id
    FROM waiting AS w
    ON CONFLICT DO NOTHING
    RETURNING job_id
),
failed_running AS (
    INSERT INTO {schema}.done_entries (
        ready_slot, ready_generation, job_id, kind, queue, state, priority, attempt, run_lease,
        lane_seq, enqueue_shard, attempted_at, finalized_at, payload)
    SELECT r.ready_slot, r.ready_generation, r.id, r.kind, r.queue, 'failed', r.priority,
           r.attempt, r.run_lease, r.lane_seq, r.enqueue_shard, r.attempted_at,
           clock_timestamp(),
           jsonb_set(
               CASE WHEN nullif(a.progress, 'null'::jsonb) IS NULL THEN r.payload
                    ELSE jsonb_set(r.payload, '{{progress}}', a.progress) END,
               '{{errors}}',
               coalesce(nullif(r.payload -> 'errors', 'null'::jsonb), '[]'::jsonb)
               || jsonb_build_array(jsonb_build_object(
                      'error', %(reason)s::text,
                      'attempt', r.attempt,
                      'at', now(),
                      'terminal', true)))
    FROM running AS r
    LEFT JOIN dropped_attempt AS a ON a.job_id = r.id
    RETURNING ready_slot, ready_generation, job_id, queue, priority, enqueue_shard
),
failed_waiting AS (
    INSERT INTO {schema}.done_entries (
        ready_slot, ready_generation, job_id, kind, queue, args, state, priority, attempt,
        run_lease, max_attempts, lane_seq, enqueue_shard, run_at, attempted_at, finalized_at,
        created_at, unique_key, unique_states, payload)
    SELECT w.ready_slot, w.ready_generation, w.id, w.kind, w.queue, w.args, 'failed',
           w.lane_priority, w.attempt, w.run_lease, w.max_attempts, w.lane_seq,
           w.enqueue_shard, w.run_at, w.attempted_at, clock_timestamp(), w.created_at,
           w.unique_key, w.unique_states::text,
           jsonb_set(w.payload, '{{errors}}',
               coalesce(nullif(w.payload -> 'errors', 'null'::jsonb), '[]'::jsonb)
               || jsonb_build_array(jsonb_build_object(
                      'error', %(reason)s::text,
                      'attempt', w.attempt,
                      'at', now(),
                      'terminal', true)))
    FROM waiting AS w
    WHERE w.id IN (SELECT job_id FROM tombstoned)
    RETURNING ready_slot, ready_generation, job_id, queue, priority, enqueue_shard
),
failed AS (
    SELECT * FROM failed_running
    UNION ALL
    SELECT * FROM failed_waiting
),
counted AS (
    INSERT INTO {schema}.queue_terminal_count_deltas (
        ready_slot, ready_generation, queue, priority, enqueue_shard, counter_bucket,
        terminal_delta)
    SELECT ready_slot, ready_generation, queue, priority, enqueue_shard,
           mod(job_id, 256)::smallint, 1
    FROM failed
    RETURNING terminal_delta
),
moved AS (
    SELECT t.id, t.unique_key, t.unique_states, t.state AS old_state
    FROM target AS t
    WHERE t.id IN (SELECT job_id FROM failed)
),
released AS (
    DELETE FROM {schema}.job_unique_claims AS u
    USING moved AS m
    WHERE m.unique_key IS NOT NULL AND m.unique_states IS NOT NULL
      AND u.unique_key = m.unique_key AND u.job_id = m.id
      AND {schema}.job_state_in_bitmask(m.unique_states, m.old_state)
      AND NOT {schema}.job_state_in_bitmask(m.unique_states, 'failed')
    RETURNING u.job_id
),
claimed_keys AS (
    INSERT INTO {schema}.job_unique_claims (unique_key, job_id)
    SELECT m.unique_key, m.id
    FROM moved AS m
    WHERE m.unique_key IS NOT NULL AND m.unique_states IS NOT NULL
      AND {schema}.job_state_in_bitmask(m.unique_states, 'failed')
      AND NOT {schema}.job_state_in_bitmask(m.unique_states, m.old_state)
    ON CONFLICT (unique_key) DO NOTHING
    RETURNING job_id
)
SELECT t.queuetop_given, t.id::text AS id, t.run_lease::text AS new_token
FROM target AS t
WHERE t.id IN (SELECT job_id FROM failed)
