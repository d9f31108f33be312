-- purpose: whether the db_worker running a task lives, where the workers name their sessions 'django_tasks:' || worker id (django-tasks records no liveness): true while a session of that name is connected; false when none is while the naming is in use (some session of this database is named so); else unknown
CASE WHEN (t.worker_ids ->> -1) IS NULL THEN NULL
     WHEN EXISTS (SELECT 1 FROM pg_stat_activity AS a
                  WHERE a.application_name = 'django_tasks:' || (t.worker_ids ->> -1)) THEN true
     WHEN EXISTS (SELECT 1 FROM pg_stat_activity AS a
                  WHERE a.datname = current_database()
                    AND a.application_name LIKE 'django\_tasks:%%') THEN false
END
