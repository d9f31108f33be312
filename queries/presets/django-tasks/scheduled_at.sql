-- purpose: when a django-tasks task may run: run_after, which enqueue sets to 9999-01-01 for a task that may run at once (the backend's get_date_max)
CASE WHEN t.run_after >= '9999-01-01 00:00:00+00'::timestamptz THEN NULL ELSE t.run_after END
