-- purpose: whether the DBOS executor running a workflow lives, where the executors name their sessions 'dbos:' || executor id (DBOS records no liveness): true while a session of that name is connected; false when none is while the naming is in use (some session of this database is named so); else unknown
CASE WHEN t.executor_id IS NULL THEN NULL
     WHEN EXISTS (SELECT 1 FROM pg_stat_activity AS a
                  WHERE a.application_name = 'dbos:' || t.executor_id) THEN true
     WHEN EXISTS (SELECT 1 FROM pg_stat_activity AS a
                  WHERE a.datname = current_database()
                    AND a.application_name LIKE 'dbos:%%') THEN false
END
