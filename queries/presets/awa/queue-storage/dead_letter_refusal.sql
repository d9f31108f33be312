-- purpose: why awa cannot fail the job for good on its queue storage: a scheduled or retryable job waits in awa.deferred_jobs (cancel it with awa's own cancel), one already in awa's dead-letter queue, one parked for its callback (fail it through the callback); else another job holds its unique key while failed is one of its unique states (awa's unique claims would refuse it)
CASE
    WHEN t.plane = 'deferred'
        THEN 'awa keeps this ' || t.state::text || ' job in awa.deferred_jobs: cancel it with awa''s own cancel (client.cancel)'
    WHEN t.plane = 'dlq'
        THEN 'awa already holds this job in its dead-letter queue (awa.dlq_entries)'
    WHEN t.state = 'waiting_external'
        THEN 'awa parked this job for its callback: fail it with awa''s own fail_external, or cancel it'
    ELSE (SELECT 'awa refuses: job ' || u.job_id::text || ' holds the same unique key'
          FROM {schema}.job_unique_claims AS u
          WHERE t.unique_key IS NOT NULL AND t.unique_states IS NOT NULL
            AND {schema}.job_state_in_bitmask(t.unique_states, 'failed')
            AND u.unique_key = t.unique_key AND u.job_id <> t.id
          LIMIT 1)
END
