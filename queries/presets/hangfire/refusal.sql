-- purpose: why queuetop leaves a Hangfire job alone: a Hangfire process holds its state lock (the lock row <schema>:job:<id>:state-lock that BackgroundJobStateChanger takes around every state change), unless older than the DistributedLockTimeout (10 minutes) after which Hangfire itself takes it over
CASE WHEN EXISTS (SELECT 1 FROM {schema}."lock" AS l
                  WHERE right(l.resource, length(':job:' || t.id || ':state-lock'))
                        = ':job:' || t.id || ':state-lock'
                    AND l.acquired > now() - interval '10 minutes')
     THEN 'a Hangfire process is changing this job''s state (it holds the job''s state lock); '
          'try again once it has'
END
