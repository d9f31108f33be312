-- purpose: awa's jobs on its queue storage engine as rows with awa.jobs_hot's columns (read as the table by every statement of this folder): a job lives in one plane at a time, each branch one plane, as awa's own load_job (awa-model queue_storage.rs, awa 0.6) composes a job: unclaimed ready entries (at or past the lane's claim cursor, not tombstoned, and not claimed by a claim whose cursor advance is still to come), deferred_jobs (scheduled, retryable), materialized leases, open claim receipts and compact claim-batch items (running), terminal_jobs (its view of done_entries and compact completions) and dlq_entries; a running job's heartbeat is the one awa's rescue reads (attempt_state's beat, else the lease's, else the claim time); plane, payload, lane_priority, enqueue_shard, ready_slot, ready_generation and lane_seq say where the job is, for this folder's actions
-- plane ready: available jobs (the exact available set of awa's queue_counts; each lane's claim cursor read once)
SELECT ready.job_id AS id, ready.kind, ready.queue, ready.args,
       'available'::{schema}.job_state AS state,
       ready.priority, ready.attempt, ready.max_attempts, ready.run_at,
       NULL::timestamptz AS heartbeat_at, NULL::timestamptz AS deadline_at,
       ready.attempted_at, NULL::timestamptz AS finalized_at, ready.created_at,
       {schema}.queue_storage_payload_errors(ready.payload) AS errors,
       coalesce(nullif(ready.payload -> 'metadata', 'null'::jsonb), '{{}}'::jsonb) AS metadata,
       {schema}.queue_storage_payload_tags(ready.payload) AS tags,
       ready.unique_key, ready.unique_states::bit(8) AS unique_states,
       NULL::uuid AS callback_id, NULL::timestamptz AS callback_timeout_at,
       NULL::text AS callback_filter, NULL::text AS callback_on_complete,
       NULL::text AS callback_on_fail, NULL::text AS callback_transform,
       ready.run_lease, nullif(ready.payload -> 'progress', 'null'::jsonb) AS progress,
       'ready'::text AS plane, coalesce(ready.payload, '{{}}'::jsonb) AS payload,
       ready.priority AS lane_priority, ready.enqueue_shard,
       ready.ready_slot, ready.ready_generation, ready.lane_seq
FROM {schema}.ready_entries AS ready
JOIN (SELECT head.queue, head.priority, head.enqueue_shard,
             {schema}.sequence_next_value(head.seq_name) AS cursor
      FROM {schema}.queue_claim_heads AS head) AS claims
  ON claims.queue = ready.queue
 AND claims.priority = ready.priority
 AND claims.enqueue_shard = ready.enqueue_shard
WHERE ready.lane_seq >= claims.cursor
  AND NOT EXISTS (
      SELECT 1 FROM {schema}.ready_tombstones AS tomb
      WHERE tomb.ready_slot = ready.ready_slot
        AND tomb.ready_generation = ready.ready_generation
        AND tomb.queue = ready.queue
        AND tomb.priority = ready.priority
        AND tomb.enqueue_shard = ready.enqueue_shard
        AND tomb.lane_seq = ready.lane_seq)
  AND NOT EXISTS (
      SELECT 1 FROM {schema}.ready_claim_attempt_batches AS claimed
      WHERE claimed.ready_slot = ready.ready_slot
        AND claimed.ready_generation = ready.ready_generation
        AND claimed.queue = ready.queue
        AND claimed.priority = ready.priority
        AND claimed.enqueue_shard = ready.enqueue_shard
        AND claimed.first_lane_seq <= ready.lane_seq
        AND claimed.next_lane_seq > ready.lane_seq
        AND claimed.lane_ranges @> ready.lane_seq)
UNION ALL
-- plane deferred: scheduled and retryable jobs, made available by awa's promoter when due
SELECT deferred.job_id, deferred.kind, deferred.queue, deferred.args, deferred.state,
       deferred.priority, deferred.attempt, deferred.max_attempts, deferred.run_at,
       NULL::timestamptz, NULL::timestamptz,
       deferred.attempted_at, deferred.finalized_at, deferred.created_at,
       {schema}.queue_storage_payload_errors(deferred.payload),
       coalesce(nullif(deferred.payload -> 'metadata', 'null'::jsonb), '{{}}'::jsonb),
       {schema}.queue_storage_payload_tags(deferred.payload),
       deferred.unique_key, deferred.unique_states::bit(8),
       NULL::uuid, NULL::timestamptz, NULL::text, NULL::text, NULL::text, NULL::text,
       deferred.run_lease, nullif(deferred.payload -> 'progress', 'null'::jsonb),
       'deferred'::text, coalesce(deferred.payload, '{{}}'::jsonb),
       deferred.priority, 0::smallint,
       NULL::int, NULL::bigint, NULL::bigint
FROM {schema}.deferred_jobs AS deferred
UNION ALL
-- plane lease: attempts materialized into leases (running, or waiting_external for a callback)
SELECT lease.job_id, ready.kind, ready.queue, ready.args, lease.state,
       lease.priority, lease.attempt, lease.max_attempts, ready.run_at,
       coalesce(attempt.heartbeat_at, lease.heartbeat_at), lease.deadline_at,
       lease.attempted_at, NULL::timestamptz, ready.created_at,
       {schema}.queue_storage_payload_errors(ready.payload),
       coalesce(nullif(ready.payload -> 'metadata', 'null'::jsonb), '{{}}'::jsonb),
       {schema}.queue_storage_payload_tags(ready.payload),
       ready.unique_key, ready.unique_states::bit(8),
       lease.callback_id, lease.callback_timeout_at, attempt.callback_filter,
       attempt.callback_on_complete, attempt.callback_on_fail, attempt.callback_transform,
       lease.run_lease,
       coalesce(nullif(attempt.progress, 'null'::jsonb), nullif(ready.payload -> 'progress', 'null'::jsonb)),
       'lease'::text, coalesce(ready.payload, '{{}}'::jsonb),
       ready.priority, ready.enqueue_shard,
       lease.ready_slot, lease.ready_generation, lease.lane_seq
FROM {schema}.leases AS lease
JOIN {schema}.ready_entries AS ready
  ON ready.ready_slot = lease.ready_slot
 AND ready.ready_generation = lease.ready_generation
 AND ready.queue = lease.queue
 AND ready.enqueue_shard = lease.enqueue_shard
 AND ready.lane_seq = lease.lane_seq
 AND ready.job_id = lease.job_id
LEFT JOIN {schema}.attempt_state AS attempt
  ON attempt.job_id = lease.job_id
 AND attempt.run_lease = lease.run_lease
UNION ALL
-- plane receipt: open claim receipts (no closure evidence, not materialized into leases)
SELECT claims.job_id, ready.kind, ready.queue, ready.args, 'running'::{schema}.job_state,
       claims.priority, claims.attempt, claims.max_attempts, ready.run_at,
       coalesce(attempt.heartbeat_at, claims.claimed_at), claims.deadline_at,
       claims.claimed_at, NULL::timestamptz, ready.created_at,
       {schema}.queue_storage_payload_errors(ready.payload),
       coalesce(nullif(ready.payload -> 'metadata', 'null'::jsonb), '{{}}'::jsonb),
       {schema}.queue_storage_payload_tags(ready.payload),
       ready.unique_key, ready.unique_states::bit(8),
       NULL::uuid, NULL::timestamptz, attempt.callback_filter,
       attempt.callback_on_complete, attempt.callback_on_fail, attempt.callback_transform,
       claims.run_lease,
       coalesce(nullif(attempt.progress, 'null'::jsonb), nullif(ready.payload -> 'progress', 'null'::jsonb)),
       'receipt'::text, coalesce(ready.payload, '{{}}'::jsonb),
       ready.priority, ready.enqueue_shard,
       claims.ready_slot, claims.ready_generation, claims.lane_seq
FROM {schema}.lease_claims AS claims
JOIN {schema}.ready_entries AS ready
  ON ready.ready_slot = claims.ready_slot
 AND ready.ready_generation = claims.ready_generation
 AND ready.queue = claims.queue
 AND ready.enqueue_shard = claims.enqueue_shard
 AND ready.lane_seq = claims.lane_seq
 AND ready.job_id = claims.job_id
LEFT JOIN {schema}.attempt_state AS attempt
  ON attempt.job_id = claims.job_id
 AND attempt.run_lease = claims.run_lease
WHERE claims.closed_at IS NULL
  AND NOT EXISTS (
      SELECT 1 FROM {schema}.lease_claim_closures AS closures
      WHERE closures.claim_slot = claims.claim_slot
        AND closures.job_id = claims.job_id
        AND closures.run_lease = claims.run_lease)
  AND NOT EXISTS (
      SELECT 1 FROM {schema}.lease_claim_closure_batches AS closure_batches
      WHERE closure_batches.receipt_ranges @> claims.receipt_id)
  AND NOT EXISTS (
      SELECT 1 FROM {schema}.done_entries AS done
      WHERE done.job_id = claims.job_id AND done.run_lease = claims.run_lease)
  AND NOT EXISTS (
      SELECT 1 FROM {schema}.deferred_jobs AS later
      WHERE later.job_id = claims.job_id AND later.run_lease = claims.run_lease)
  AND NOT EXISTS (
      SELECT 1 FROM {schema}.dlq_entries AS dlq
      WHERE dlq.job_id = claims.job_id AND dlq.run_lease = claims.run_lease)
  AND NOT EXISTS (
      SELECT 1 FROM {schema}.leases AS lease
      WHERE lease.job_id = claims.job_id AND lease.run_lease = claims.run_lease)
UNION ALL
-- plane batch_receipt: open items of compact claim batches (awa's zero-deadline claims)
SELECT items.job_id, ready.kind, ready.queue, ready.args, 'running'::{schema}.job_state,
       batches.priority, items.attempt, items.max_attempts, ready.run_at,
       coalesce(attempt.heartbeat_at, batches.claimed_at), batches.deadline_at,
       batches.claimed_at, NULL::timestamptz, ready.created_at,
       {schema}.queue_storage_payload_errors(ready.payload),
       coalesce(nullif(ready.payload -> 'metadata', 'null'::jsonb), '{{}}'::jsonb),
       {schema}.queue_storage_payload_tags(ready.payload),
       ready.unique_key, ready.unique_states::bit(8),
       NULL::uuid, NULL::timestamptz, attempt.callback_filter,
       attempt.callback_on_complete, attempt.callback_on_fail, attempt.callback_transform,
       items.run_lease,
       coalesce(nullif(attempt.progress, 'null'::jsonb), nullif(ready.payload -> 'progress', 'null'::jsonb)),
       'batch_receipt'::text, coalesce(ready.payload, '{{}}'::jsonb),
       ready.priority, ready.enqueue_shard,
       batches.ready_slot, batches.ready_generation, items.lane_seq
FROM {schema}.lease_claim_batches AS batches
CROSS JOIN LATERAL unnest(batches.job_ids, batches.run_leases, batches.receipt_ids,
                          batches.lane_seqs, batches.attempts, batches.max_attempts)
     AS items(job_id, run_lease, receipt_id, lane_seq, attempt, max_attempts)
JOIN {schema}.ready_entries AS ready
  ON ready.ready_slot = batches.ready_slot
 AND ready.ready_generation = batches.ready_generation
 AND ready.queue = batches.queue
 AND ready.enqueue_shard = batches.enqueue_shard
 AND ready.lane_seq = items.lane_seq
 AND ready.job_id = items.job_id
LEFT JOIN {schema}.attempt_state AS attempt
  ON attempt.job_id = items.job_id
 AND attempt.run_lease = items.run_lease
WHERE NOT EXISTS (
      SELECT 1 FROM {schema}.lease_claim_closures AS closures
      WHERE closures.claim_slot = batches.claim_slot
        AND closures.job_id = items.job_id
        AND closures.run_lease = items.run_lease)
  AND NOT EXISTS (
      SELECT 1 FROM {schema}.lease_claim_closure_batches AS closure_batches
      WHERE closure_batches.claim_slot = batches.claim_slot
        AND closure_batches.receipt_ranges @> items.receipt_id)
  AND NOT EXISTS (
      SELECT 1 FROM {schema}.leases AS lease
      WHERE lease.job_id = items.job_id AND lease.run_lease = items.run_lease)
  AND NOT EXISTS (
      SELECT 1 FROM {schema}.done_entries AS done
      WHERE done.job_id = items.job_id AND done.run_lease = items.run_lease)
  AND NOT EXISTS (
      SELECT 1 FROM {schema}.deferred_jobs AS later
      WHERE later.job_id = items.job_id AND later.run_lease = items.run_lease)
  AND NOT EXISTS (
      SELECT 1 FROM {schema}.dlq_entries AS dlq
      WHERE dlq.job_id = items.job_id AND dlq.run_lease = items.run_lease)
UNION ALL
-- plane terminal: completed, failed and cancelled jobs still in the ring (awa's terminal_jobs view)
SELECT done.job_id, done.kind, done.queue, done.args, done.state,
       done.priority, done.attempt, done.max_attempts, done.run_at,
       NULL::timestamptz, NULL::timestamptz,
       done.attempted_at, done.finalized_at, done.created_at,
       {schema}.queue_storage_payload_errors(done.payload),
       coalesce(nullif(done.payload -> 'metadata', 'null'::jsonb), '{{}}'::jsonb),
       {schema}.queue_storage_payload_tags(done.payload),
       done.unique_key, done.unique_states::bit(8),
       NULL::uuid, NULL::timestamptz, NULL::text, NULL::text, NULL::text, NULL::text,
       done.run_lease, nullif(done.payload -> 'progress', 'null'::jsonb),
       'terminal'::text, coalesce(done.payload, '{{}}'::jsonb),
       done.priority, done.enqueue_shard,
       done.ready_slot, done.ready_generation, done.lane_seq
FROM {schema}.terminal_jobs AS done
UNION ALL
-- plane dlq: jobs awa's worker (or its admin) moved to its dead-letter queue
SELECT dlq.job_id, dlq.kind, dlq.queue, dlq.args, dlq.state,
       dlq.priority, dlq.attempt, dlq.max_attempts, dlq.run_at,
       NULL::timestamptz, NULL::timestamptz,
       dlq.attempted_at, dlq.finalized_at, dlq.created_at,
       {schema}.queue_storage_payload_errors(dlq.payload),
       coalesce(nullif(dlq.payload -> 'metadata', 'null'::jsonb), '{{}}'::jsonb),
       {schema}.queue_storage_payload_tags(dlq.payload),
       dlq.unique_key, dlq.unique_states::bit(8),
       NULL::uuid, NULL::timestamptz, NULL::text, NULL::text, NULL::text, NULL::text,
       dlq.run_lease, nullif(dlq.payload -> 'progress', 'null'::jsonb),
       'dlq'::text, coalesce(dlq.payload, '{{}}'::jsonb),
       dlq.priority, 0::smallint,
       NULL::int, NULL::bigint, NULL::bigint
FROM {schema}.dlq_entries AS dlq
