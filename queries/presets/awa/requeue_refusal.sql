-- purpose: why awa cannot take the job back to available: another job holds its unique key while available is one of its unique states (awa's unique-claims trigger would refuse the write; its own rescue cancels such a job as a duplicate)
(SELECT format('awa refuses: job %%s holds the same unique key', u.job_id)
 FROM {schema}.job_unique_claims AS u
 WHERE t.unique_key IS NOT NULL AND t.unique_states IS NOT NULL
   AND {schema}.job_state_in_bitmask(t.unique_states, 'available')
   AND u.unique_key = t.unique_key AND u.job_id <> t.id
 LIMIT 1)
