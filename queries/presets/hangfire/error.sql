-- purpose: a Hangfire job's last error: a Failed state's ExceptionMessage (else its reason), the 'Retry attempt N of M: message' reason of a retry, a Deleted state's reason
CASE WHEN t.statename IN ('Failed', 'Deleted', 'Scheduled', 'Enqueued')
     THEN (SELECT CASE
                      WHEN t.statename = 'Failed'
                          THEN coalesce(s.data::jsonb ->> 'ExceptionMessage', s.reason)
                      WHEN t.statename = 'Deleted' THEN s.reason
                      WHEN starts_with(lower(s.reason), 'retry attempt') THEN s.reason
                  END
           FROM {schema}."state" AS s
           WHERE s.id = t.stateid)
END
