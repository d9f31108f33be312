-- purpose: why a django-tasks task failed: the exception class set_failed stored (its traceback in the detail)
CASE WHEN t.status = 'FAILED' THEN nullif(t.exception_class_path, '') END
