-- purpose: whether the server running a Processing job lives: its row in the server table with a heartbeat (lastheartbeat) under Hangfire's ServerTimeout (5 minutes, when ServerWatchdog removes it); unknown for a job whose queue row waits unfetched again (a stopping worker's requeue: no claim to judge) or whose state names no server
CASE
    WHEN t.statename IS DISTINCT FROM 'Processing' THEN NULL
    WHEN EXISTS (SELECT 1 FROM {schema}.jobqueue AS q WHERE q.jobid = t.id)
         AND NOT EXISTS (SELECT 1 FROM {schema}.jobqueue AS q
                         WHERE q.jobid = t.id AND q.fetchedat IS NOT NULL)
        THEN NULL
    ELSE (SELECT CASE WHEN x.server IS NULL THEN NULL
                      ELSE coalesce((SELECT w.lastheartbeat > now() - interval '5 minutes'
                                     FROM {schema}.server AS w WHERE w.id = x.server), false)
                 END
          FROM (SELECT coalesce(s.data::jsonb ->> 'ServerId', s.data::jsonb ->> 'ServerName')
                       AS server
                FROM {schema}."state" AS s WHERE s.id = t.stateid) AS x)
END
