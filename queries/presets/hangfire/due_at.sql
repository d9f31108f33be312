-- purpose: when a Hangfire job is due: for a Scheduled one its state's EnqueueAt (a millisecond timestamp, or ISO 8601 before CompatibilityLevel 1.7), when DelayedJobScheduler enqueues it; for an Enqueued one the time of its Enqueued state
CASE WHEN t.statename IN ('Enqueued', 'Scheduled')
     THEN (SELECT CASE
                      WHEN t.statename = 'Enqueued' THEN s.createdat
                      WHEN s.data::jsonb ->> 'EnqueueAt' ~ '^[0-9]+$'
                          THEN to_timestamp((s.data::jsonb ->> 'EnqueueAt')::numeric / 1000)
                      WHEN s.data::jsonb ->> 'EnqueueAt'
                           ~ '^[0-9]+-[0-9]+-[0-9]+T[0-9]+:[0-9]+:[0-9]+([.][0-9]+)?(Z|[+-][0-9]+:[0-9]+)$'
                          THEN (s.data::jsonb ->> 'EnqueueAt')::timestamptz
                  END
           FROM {schema}."state" AS s
           WHERE s.id = t.stateid)
END
