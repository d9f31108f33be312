-- purpose: why awa cannot fail the job for good: another job holds its unique key while failed is one of its unique states (awa's unique-claims trigger would refuse the write)
(SELECT format('awa refuses: job %%s holds the same unique key', u.job_id)
 FROM {schema}.job_unique_claims AS u
 WHERE t.unique_key IS NOT NULL AND t.unique_states IS NOT NULL
   AND {schema}.job_state_in_bitmask(t.unique_states, 'failed')
   AND u.unique_key = t.unique_key AND u.job_id <> t.id
 LIMIT 1)
