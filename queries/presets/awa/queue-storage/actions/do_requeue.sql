-- purpose: requeue awa jobs on its queue storage only while still as observed (state, run_lease) and, unless forced, past their heartbeat: a running attempt as awa's heartbeat rescue and then its promoter leave it (its claim receipt closed 'rescued', or its lease deleted and its claim closed 'rescue'; attempt_state deleted, its progress kept; the job appended to its own ready lane due now, attempt and run_lease kept, 'rescued by queuetop requeue: worker presumed dead' appended to its errors), a failed or cancelled one as awa's admin retry does (its done entry deleted with a -1 terminal-count delta and its claim closed 'terminal_removed'; the job appended to its ready lane, attempt 0, due now); the lane's sequence reserved by awa's own reserve_enqueue_seq, a ready segment recorded, unique claims moved as awa's sync does, its queue notified; the next claim advances run_lease (awa-model queue_storage.rs rescue_stale_heartbeats, hydrate_deleted_leases_tx, promote_due, retry_job_tx, insert_existing_ready_rows_tx; awa.insert_job_compat; awa 0.6)
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
retried AS MATERIALIZED (
    SELECT * FROM target
    WHERE plane = 'terminal' AND state IN ('failed', 'cancelled')
),
closed AS (
    INSERT INTO {schema}.lease_claim_closures (claim_slot, job_id, run_lease, outcome, closed_at)
    SELECT claims.claim_slot, claims.job_id, claims.run_lease, s.outcome, clock_timestamp()
    FROM (SELECT r.id, r.run_lease,
                 CASE WHEN r.plane = 'lease' THEN 'rescue' ELSE 'rescued' END AS outcome
          FROM running AS r
          UNION ALL
          SELECT r.id, r.run_lease, 'terminal_removed' FROM retried AS r) AS s
    JOIN {schema}.lease_claims AS claims
      ON claims.job_id = s.id AND claims.run_lease = s.run_lease
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
           CASE WHEN r.plane = 'lease' THEN 'rescue' ELSE 'rescued' END,
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
removed AS (
    DELETE FROM {schema}.done_entries AS done
    USING retried AS r
    WHERE done.ready_slot = r.ready_slot AND done.ready_generation = r.ready_generation
      AND done.queue = r.queue AND done.enqueue_shard = r.enqueue_shard
      AND done.lane_seq = r.lane_seq AND done.job_id = r.id
      AND done.run_lease = r.run_lease AND done.state = r.state
    RETURNING done.ready_slot, done.ready_generation, done.job_id, done.queue, done.priority,
              done.enqueue_shard
),
uncounted AS (
    INSERT INTO {schema}.queue_terminal_count_deltas (
        ready_slot, ready_generation, queue, priority, enqueue_shard, counter_bucket,
        terminal_delta)
    SELECT ready_slot, ready_generation, queue, priority, enqueue_shard,
           mod(job_id, 256)::smallint, -1
    FROM removed
    RETURNING terminal_delta
),
moved AS (
    SELECT r.id, r.kind, r.queue, r.args, r.lane_priority, r.enqueue_shard, r.attempt,
           r.run_lease, r.max_attempts, r.attempted_at, r.created_at, r.unique_key,
           r.unique_states, r.state AS old_state,
           jsonb_set(
               CASE WHEN nullif(a.progress, 'null'::jsonb) IS NULL THEN r.payload
                    ELSE jsonb_set(r.payload, '{{progress}}', a.progress) END,
               '{{errors}}',
               coalesce(nullif(r.payload -> 'errors', 'null'::jsonb), '[]'::jsonb)
               || jsonb_build_array(jsonb_build_object(
                      'error', 'rescued by queuetop requeue: worker presumed dead',
                      'attempt', r.attempt,
                      'at', now()))) AS payload
    FROM running AS r
    LEFT JOIN dropped_attempt AS a ON a.job_id = r.id
    UNION ALL
    SELECT r.id, r.kind, r.queue, r.args, r.lane_priority, r.enqueue_shard, 0::smallint,
           r.run_lease, r.max_attempts, NULL::timestamptz, r.created_at, r.unique_key,
           r.unique_states, r.state, r.payload
    FROM retried AS r
    WHERE r.id IN (SELECT job_id FROM removed)
),
ring AS (
    SELECT current_slot, generation FROM {schema}.queue_ring_state WHERE singleton
),
placed AS MATERIALIZED (
    SELECT m.*,
           {schema}.reserve_enqueue_seq(m.queue, m.lane_priority, m.enqueue_shard, 1) AS lane_seq
    FROM moved AS m
),
readied AS (
    INSERT INTO {schema}.ready_entries (
        ready_slot, ready_generation, job_id, kind, queue, args, priority, attempt, run_lease,
        max_attempts, lane_seq, enqueue_shard, run_at, attempted_at, created_at, unique_key,
        unique_states, payload)
    SELECT ring.current_slot, ring.generation, p.id, p.kind, p.queue, p.args,
           p.lane_priority, p.attempt, p.run_lease, p.max_attempts, p.lane_seq,
           p.enqueue_shard, clock_timestamp(), p.attempted_at, p.created_at, p.unique_key,
           p.unique_states::text, nullif(p.payload, '{{}}'::jsonb)
    FROM placed AS p
    CROSS JOIN ring
    RETURNING ready_slot, ready_generation, job_id, queue, priority, enqueue_shard, lane_seq,
              run_at
),
segments AS (
    INSERT INTO {schema}.ready_segments (
        ready_slot, ready_generation, queue, priority, enqueue_shard, first_lane_seq,
        next_lane_seq, first_run_at)
    SELECT ready_slot, ready_generation, queue, priority, enqueue_shard, lane_seq,
           lane_seq + 1, run_at
    FROM readied
    ON CONFLICT (ready_slot, ready_generation, queue, priority, enqueue_shard, first_lane_seq)
    DO NOTHING
    RETURNING first_lane_seq
),
released AS (
    DELETE FROM {schema}.job_unique_claims AS u
    USING moved AS m
    WHERE m.unique_key IS NOT NULL AND m.unique_states IS NOT NULL
      AND u.unique_key = m.unique_key AND u.job_id = m.id
      AND {schema}.job_state_in_bitmask(m.unique_states, m.old_state)
      AND NOT {schema}.job_state_in_bitmask(m.unique_states, 'available')
    RETURNING u.job_id
),
claimed_keys AS (
    INSERT INTO {schema}.job_unique_claims (unique_key, job_id)
    SELECT m.unique_key, m.id
    FROM moved AS m
    WHERE m.unique_key IS NOT NULL AND m.unique_states IS NOT NULL
      AND {schema}.job_state_in_bitmask(m.unique_states, 'available')
      AND NOT {schema}.job_state_in_bitmask(m.unique_states, m.old_state)
    ON CONFLICT (unique_key) DO NOTHING
    RETURNING job_id
),
notified AS (
    SELECT count(pg_notify('awa:' || q.queue, '')) AS n
    FROM (SELECT DISTINCT queue FROM readied) AS q
)
SELECT t.queuetop_given, t.id::text AS id, t.run_lease::text AS new_token
FROM target AS t
JOIN readied AS r ON r.job_id = t.id
CROSS JOIN notified
