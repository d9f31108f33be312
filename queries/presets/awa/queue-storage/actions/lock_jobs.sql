-- purpose: lock the given awa jobs on its queue storage for an action without ever waiting behind a worker, and return their current state (the table is this folder's table.sql): a running attempt by awa's own completion lock (the advisory lock its complete, heartbeat and rescue paths take on job and run_lease: tried, never awaited) and its claim receipt or lease row, an available job by its ready entry and its lane's claim head (no claim takes it meanwhile), a failed or cancelled one by its done entry, each FOR UPDATE SKIP LOCKED (awa-model queue_storage.rs, awa 0.6); jobs refused by name (deferred, in the dead-letter queue, parked for a callback) and finished ones come back unlocked: nothing writes them
WITH cur AS MATERIALIZED (
    SELECT i.queuetop_given, t.*
    FROM unnest(%(ids)s::text[]) AS i(queuetop_given)
    JOIN {table} AS t ON {job_id} = i.queuetop_given::{id_type}
),
attempt AS MATERIALIZED (
    SELECT c.queuetop_given, c.id, c.run_lease, c.plane
    FROM cur AS c
    WHERE c.state = 'running'
      AND pg_try_advisory_xact_lock(hashtextextended(
          'awa.receipt.complete:' || c.id::text || ':' || c.run_lease::text, 0))
),
receipt AS (
    SELECT a.queuetop_given
    FROM attempt AS a
    JOIN {schema}.lease_claims AS claims
      ON claims.job_id = a.id AND claims.run_lease = a.run_lease
    WHERE a.plane = 'receipt'
    FOR UPDATE OF claims SKIP LOCKED
),
batch_receipt AS (
    SELECT a.queuetop_given
    FROM attempt AS a
    JOIN {schema}.lease_claim_batches AS batches ON a.id = ANY (batches.job_ids)
    WHERE a.plane = 'batch_receipt'
      AND EXISTS (SELECT 1 FROM unnest(batches.job_ids, batches.run_leases) AS items(job_id, run_lease)
                  WHERE items.job_id = a.id AND items.run_lease = a.run_lease)
    FOR UPDATE OF batches SKIP LOCKED
),
lease AS (
    SELECT a.queuetop_given
    FROM attempt AS a
    JOIN {schema}.leases AS lease
      ON lease.job_id = a.id AND lease.run_lease = a.run_lease
    WHERE a.plane = 'lease'
    FOR UPDATE OF lease SKIP LOCKED
),
ready AS (
    SELECT c.queuetop_given
    FROM cur AS c
    JOIN {schema}.ready_entries AS ready
      ON ready.ready_slot = c.ready_slot AND ready.ready_generation = c.ready_generation
     AND ready.queue = c.queue AND ready.priority = c.lane_priority
     AND ready.enqueue_shard = c.enqueue_shard AND ready.lane_seq = c.lane_seq
    WHERE c.plane = 'ready'
    FOR UPDATE OF ready SKIP LOCKED
),
ready_lane AS (
    SELECT c.queuetop_given
    FROM cur AS c
    JOIN {schema}.queue_claim_heads AS head
      ON head.queue = c.queue AND head.priority = c.lane_priority
     AND head.enqueue_shard = c.enqueue_shard
    WHERE c.queuetop_given IN (SELECT r.queuetop_given FROM ready AS r)
    FOR UPDATE OF head SKIP LOCKED
),
done AS (
    SELECT c.queuetop_given
    FROM cur AS c
    JOIN {schema}.done_entries AS done
      ON done.ready_slot = c.ready_slot AND done.ready_generation = c.ready_generation
     AND done.queue = c.queue AND done.enqueue_shard = c.enqueue_shard
     AND done.lane_seq = c.lane_seq AND done.job_id = c.id AND done.run_lease = c.run_lease
    WHERE c.plane = 'terminal' AND c.state IN ('failed', 'cancelled')
    FOR UPDATE OF done SKIP LOCKED
),
held AS (
    SELECT queuetop_given FROM receipt
    UNION ALL SELECT queuetop_given FROM batch_receipt
    UNION ALL SELECT queuetop_given FROM lease
    UNION ALL SELECT queuetop_given FROM ready_lane
    UNION ALL SELECT queuetop_given FROM done
    UNION ALL
    SELECT c.queuetop_given FROM cur AS c
    WHERE c.plane IN ('deferred', 'dlq')
       OR (c.plane = 'lease' AND c.state <> 'running')
       OR (c.plane = 'terminal' AND c.state NOT IN ('failed', 'cancelled'))
)
SELECT t.queuetop_given,
       {job_id}::text AS id,
       {state}::text AS status,
       {worker}::text AS worker,
       {lease_token}::text AS lease_token,
       {attempts}::int AS attempts,
       {lease_until} AS lease_until,
       {is_stale} AS expired,
       {requeue_refusal}::text AS requeue_refusal,
       {dead_letter_refusal}::text AS dead_letter_refusal
FROM cur AS t
WHERE t.queuetop_given IN (SELECT h.queuetop_given FROM held AS h)
