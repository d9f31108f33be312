-- purpose: why awa cannot take the job back to available on its queue storage: a scheduled or retryable job waits in awa.deferred_jobs for awa's promoter, a job in awa's dead-letter queue comes back only through its retry_from_dlq, one parked for its callback through the callback; a job whose ready lane (queue, priority, enqueue shard) awa never opened cannot be appended to it; else another job holds its unique key while available is one of its unique states (awa's unique claims would refuse it)
CASE
    WHEN t.plane = 'deferred'
        THEN 'awa keeps this ' || t.state::text || ' job in awa.deferred_jobs and makes it available when due (run_at): nothing to requeue'
    WHEN t.plane = 'dlq'
        THEN 'awa keeps this job in its dead-letter queue (awa.dlq_entries): retry it with awa''s own retry_from_dlq'
    WHEN t.state = 'waiting_external'
        THEN 'awa parked this job for its callback: resolve, fail or cancel it with awa''s own callback API'
    WHEN t.state IN ('running', 'failed', 'cancelled')
         AND NOT EXISTS (SELECT 1 FROM {schema}.queue_enqueue_heads AS lane
                         WHERE lane.queue = t.queue AND lane.priority = t.lane_priority
                           AND lane.enqueue_shard = t.enqueue_shard)
        THEN 'awa has no ready lane for queue ' || t.queue || ' at priority ' || t.lane_priority::text || ': retry it with awa''s own retry (client.retry)'
    ELSE (SELECT 'awa refuses: job ' || u.job_id::text || ' holds the same unique key'
          FROM {schema}.job_unique_claims AS u
          WHERE t.unique_key IS NOT NULL AND t.unique_states IS NOT NULL
            AND {schema}.job_state_in_bitmask(t.unique_states, 'available')
            AND u.unique_key = t.unique_key AND u.job_id <> t.id
          LIMIT 1)
END
