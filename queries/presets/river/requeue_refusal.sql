-- purpose: why River would not retry the job: its cancel was requested (River's rescuer cancels such a job instead), or another job holds its unique key in a state River's unique index counts (it allows one)
CASE
    WHEN t.metadata ? 'cancel_attempted_at'
        THEN 'its cancel was requested (metadata cancel_attempted_at): River cancels it rather '
             'than retry it; dead-letter it instead'
    WHEN t.unique_key IS NOT NULL AND t.unique_states IS NOT NULL
         AND river_job_state_in_bitmask(t.unique_states, 'available')
        THEN (SELECT 'job ' || u.id || ' holds the same unique key (' || u.state || '): River''s '
                     'unique index allows one'
              FROM {table} AS u
              WHERE u.unique_key = t.unique_key AND u.id <> t.id AND u.unique_states IS NOT NULL
                AND river_job_state_in_bitmask(u.unique_states, u.state)
              LIMIT 1)
END
