-- purpose: a Hangfire job's lease token: its current state row (every state change writes a new one) and, while Processing, its latest fetch (a new fetch rewrites fetchedat, which Hangfire's own RemoveFromQueue, Requeue and keep-alive match), so a refetch or a state change since the operator looked is seen
t.stateid::text || '@' || coalesce(CASE WHEN t.statename = 'Processing'
                                        THEN (SELECT max(extract(epoch FROM q.fetchedat))::text
                                              FROM {schema}.jobqueue AS q WHERE q.jobid = t.id)
                                   END, '-')
