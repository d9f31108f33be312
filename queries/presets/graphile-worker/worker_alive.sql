-- purpose: whether the worker pool holding a graphile-worker job lives, where the pools name their sessions 'graphile_worker:' || pool id (graphile-worker itself records no liveness): true while a session of its pool's name is connected; false when none is and every pool of this database names its sessions (each running pool keeps one LISTEN "jobs:insert" session: none of them is unnamed or unreadable); else unknown
CASE WHEN t.locked_by IS NULL THEN NULL
     WHEN EXISTS (SELECT 1 FROM pg_stat_activity AS a
                  WHERE a.application_name = 'graphile_worker:' || t.locked_by) THEN true
     WHEN EXISTS (SELECT 1 FROM pg_stat_activity AS a
                  WHERE a.datname = current_database()
                    AND a.application_name LIKE 'graphile\_worker:%%')
      AND NOT EXISTS (SELECT 1 FROM pg_stat_activity AS a
                      WHERE a.datname = current_database()
                        AND a.application_name NOT LIKE 'graphile\_worker:%%'
                        AND (a.query LIKE 'LISTEN "jobs:insert"%%'
                             OR a.query = '<insufficient privilege>')) THEN false
END
