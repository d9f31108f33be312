-- purpose: why queuetop leaves a JobRunr job alone: the last state of jobAsJson's history, which its workers read and its state machine checks, is not the state column's (a save under way, or a write that changed one copy only)
CASE WHEN (t.jobasjson::jsonb -> 'jobHistory' -> (-1) ->> 'state') IS DISTINCT FROM t.state
     THEN 'JobRunr job ' || t.id::text || ': the last state in its jobAsJson is '
          || coalesce(t.jobasjson::jsonb -> 'jobHistory' -> (-1) ->> 'state', 'missing')
          || ' but its state column says ' || t.state
          || '; JobRunr''s workers read jobAsJson, so queuetop leaves the job alone'
END
