-- purpose: graphile-worker's job state, which it keeps in no column (derived as its own SQL decides): locked (a pool claimed it), permanently_failed (no attempt left: it never runs again), retrying (a run failed and its retry waits out the backoff in run_at), available (claimable now, or at run_at)
CASE WHEN t.locked_at IS NOT NULL THEN 'locked'
     WHEN t.attempts >= t.max_attempts THEN 'permanently_failed'
     WHEN t.attempts > 0 AND t.run_at > now() THEN 'retrying'
     ELSE 'available' END
